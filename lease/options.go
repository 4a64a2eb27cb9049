package lease

import (
	"errors"
	"strconv"
	"strings"
	"time"
)

// Defaults for Options.
const (
	DefaultTTL = 15 * time.Second
	// MaxIdentityLen is the longest identity accepted, in bytes.
	MaxIdentityLen = 256
)

// Options are one contender's settings for one lease.
type Options struct {
	// Identity names this contender in the record, in errors and in logs.
	// Required; printable ASCII, at most MaxIdentityLen bytes. It must be
	// unique among the contenders: DefaultIdentity gives the task ID, the
	// replica name, or the host name and process ID.
	Identity string
	// TTL is how long the lease lasts without renewal: a contender takes over
	// a record it has seen unchanged for the holder's TTL. Default 15s.
	// Backends may restrict it (Azure allows 15s to 60s; Cloud Storage, at
	// about one write per second to an object, at least 3s).
	TTL time.Duration
	// CallTimeout bounds each request to the store. Default TTL/5. It must be
	// less than TTL; the runner also requires it to be less than its
	// RenewDeadline, so that a hung request cannot outlast the holder's
	// deadline.
	CallTimeout time.Duration
	// RenewInterval is how often the holder renews: the runner renews no
	// more often, and every record this Lease writes carries it, so that a
	// contender judging expiry knows how long a gap between two of its
	// reads is too long to count (see Lease.Acquire). Default
	// DefaultRenewInterval(TTL), 3/8 of it. It must be positive and less
	// than TTL.
	RenewInterval time.Duration
}

// MaxTTL is the longest TTL: a crashed leader's successor waits a TTL, and
// the deadlines derived from one (3/8, 9/16 of it) stay far from
// overflowing a time.Duration.
const MaxTTL = 24 * time.Hour

// DefaultRenewInterval is Options.RenewInterval's default for a TTL: 3/8 of
// it. Together with a renew deadline of 9/16 (the runner's default) it keeps
// RenewInterval + RenewDeadline <= TTL, which the expiry rule needs, with
// 1/16 of the TTL to spare.
func DefaultRenewInterval(ttl time.Duration) time.Duration { return ttl * 3 / 8 }

// WithDefaults returns o with zero fields set to their defaults.
func (o Options) WithDefaults() Options {
	if o.TTL == 0 {
		o.TTL = DefaultTTL
	}
	if o.CallTimeout == 0 {
		o.CallTimeout = o.TTL / 5
	}
	if o.RenewInterval == 0 {
		o.RenewInterval = DefaultRenewInterval(o.TTL)
	}
	return o
}

// Validate fills in defaults and reports the first invalid field as an
// *OptionError.
func (o Options) Validate() (Options, error) {
	o = o.WithDefaults()
	if err := ValidateIdentity(o.Identity); err != nil {
		return o, err
	}
	if o.TTL < time.Millisecond || o.TTL%time.Millisecond != 0 {
		return o, &OptionError{Field: "TTL", Value: o.TTL, Reason: "must be a positive whole number of milliseconds"}
	}
	if o.TTL > MaxTTL {
		return o, &OptionError{Field: "TTL", Value: o.TTL, Reason: "must be at most " + MaxTTL.String() + ": a crashed leader's successor waits a TTL"}
	}
	if o.CallTimeout <= 0 || o.CallTimeout >= o.TTL {
		return o, &OptionError{Field: "CallTimeout", Value: o.CallTimeout, Reason: "must be positive and less than TTL (" + o.TTL.String() + ")"}
	}
	if o.RenewInterval < time.Millisecond || o.RenewInterval >= o.TTL {
		return o, &OptionError{Field: "RenewInterval", Value: o.RenewInterval, Reason: "must be at least 1ms and less than TTL (" + o.TTL.String() + ")"}
	}
	return o, nil
}

// ValidateSuccessor reports, as an *OptionError naming Handoffer's
// ReleaseTo's successor, one that cannot take a handoff of holder's term:
// not a valid identity (ValidateIdentity), or holder itself.
func ValidateSuccessor(successor, holder string) error {
	if err := ValidateIdentity(successor); err != nil {
		oe, ok := errors.AsType[*OptionError](err)
		if !ok {
			return err
		}
		e := *oe
		e.Field = "ReleaseTo's successor"
		return &e
	}
	if successor == holder {
		return &OptionError{Field: "ReleaseTo's successor", Value: quote(successor), Reason: "is the term's own holder: name another contender"}
	}
	return nil
}

// ValidateIdentity reports whether id is usable as a holder identity.
func ValidateIdentity(id string) error {
	if id == "" {
		return &OptionError{Field: "Identity", Value: `""`, Reason: "must not be empty"}
	}
	if len(id) > MaxIdentityLen {
		return &OptionError{Field: "Identity", Value: quote(id), Reason: "is " + strconv.Itoa(len(id)) + " bytes long; at most " + strconv.Itoa(MaxIdentityLen) + " are allowed"}
	}
	for i := 0; i < len(id); i++ {
		if id[i] < 0x20 || id[i] > 0x7e {
			return &OptionError{Field: "Identity", Value: quote(id), Reason: "must be printable ASCII"}
		}
	}
	return nil
}

// MaxPeriodLen is the longest period key, in bytes.
const MaxPeriodLen = 64

// ValidatePeriod reports, as an *OptionError, a period key (see
// AnnotationPeriod) that cannot be stored: empty, longer than MaxPeriodLen,
// or with a byte other than an ASCII letter or digit or one of "-._:+/@".
// An RFC 3339 time ("2026-11-23T10:00:00Z", "2026-11-23T11:00:00+01:00")
// and a decimal number are valid keys.
func ValidatePeriod(key string) error {
	if key == "" {
		return &OptionError{Field: "Period", Value: `""`, Reason: "must not be empty"}
	}
	if len(key) > MaxPeriodLen {
		return &OptionError{Field: "Period", Value: quote(key), Reason: "is " + strconv.Itoa(len(key)) + " bytes long; at most " + strconv.Itoa(MaxPeriodLen) + " are allowed"}
	}
	for i := 0; i < len(key); i++ {
		c := key[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-._:+/@", c) >= 0) {
			return &OptionError{Field: "Period", Value: quote(key), Reason: "may hold only ASCII letters, digits and -._:+/@"}
		}
	}
	return nil
}

func quote(s string) string {
	const max = 64
	if len(s) > max {
		s = s[:max] + "..."
	}
	return strconv.QuoteToASCII(s)
}
