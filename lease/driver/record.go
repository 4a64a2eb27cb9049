package driver

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/leasehold/leasehold/lease"
)

// FormatVersion is the value of the "leasehold" field of the JSON record
// (and of the marker every backend stores with its record). A decoder
// refuses any other value: a later version that changes what a field means
// writes another one, and is reported as corrupt instead of misread. A
// later version that only adds fields keeps it, and this version's decoders
// ignore the fields they do not know, so that a fleet in a rolling upgrade,
// old and new versions contending for one lease, keeps working.
const FormatVersion = 1

// MaxRecordSize is the largest encoded record a decoder accepts, in bytes.
// Backends read at most this much (plus one byte, to detect more).
const MaxRecordSize = 4096

// jsonRecord is the record as stored by byte-oriented backends (memory, S3,
// Cloud Storage):
//
//	{"leasehold":1,"holder":"worker-1","token":7,"ttl_ms":15000,"released":false,"nonce":"4f1c9a0b7e22d3c5"}
//
// and, once a scheduled job has run under it (see EncodeNonce):
//
//	{"leasehold":1,"holder":"worker-1","token":7,"ttl_ms":15000,"released":true,"nonce":"4f1c9a0b7e22d3c5;period=2026-11-23T10:00:00Z;done=1"}
type jsonRecord struct {
	Format   int    `json:"leasehold"`
	Holder   string `json:"holder"`
	Token    uint64 `json:"token"`
	TTLms    int64  `json:"ttl_ms"`
	Released bool   `json:"released"`
	Nonce    string `json:"nonce"`
}

// EncodeJSON returns the record's JSON form, one line, without its Version.
func EncodeJSON(r lease.Record) []byte {
	b, err := json.Marshal(jsonRecord{
		Format:   FormatVersion,
		Holder:   r.Holder,
		Token:    r.Token,
		TTLms:    r.TTL.Milliseconds(),
		Released: r.Released,
		Nonce:    EncodeNonce(r),
	})
	if err != nil {
		panic("lease: encoding a record cannot fail: " + err.Error())
	}
	return b
}

// DecodeJSON parses a record written by EncodeJSON, of this version or a
// later one (whose added fields it ignores), and checks it with Check.
// Anything else, including a record of another format version, yields an
// error wrapping lease.ErrCorrupt.
func DecodeJSON(b []byte) (lease.Record, error) {
	if len(b) > MaxRecordSize {
		return lease.Record{}, Corruptf("object is %d bytes or more, a record at most %d", len(b), MaxRecordSize)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	var j jsonRecord
	if err := dec.Decode(&j); err != nil {
		return lease.Record{}, Corruptf("object is not a JSON lease record: %v", err)
	}
	if dec.More() {
		return lease.Record{}, Corruptf("object has data after the JSON record")
	}
	if j.Format != FormatVersion {
		return lease.Record{}, Corruptf(`"leasehold" is %d, want %d`, j.Format, FormatVersion)
	}
	if j.TTLms > math.MaxInt64/int64(time.Millisecond) || j.TTLms < math.MinInt64/int64(time.Millisecond) {
		return lease.Record{}, Corruptf(`"ttl_ms" is %d, beyond any duration`, j.TTLms)
	}
	r := lease.Record{
		Holder:   j.Holder,
		Token:    j.Token,
		TTL:      time.Duration(j.TTLms) * time.Millisecond,
		Released: j.Released,
	}
	return r, DecodeNonce(j.Nonce, &r)
}

// EncodeNonce returns the text every backend stores as the record's nonce:
// r.Nonce, followed by r's schedule state as attributes, each ";name=value":
//
//	4f1c9a0b7e22d3c5                                      no period has run
//	4f1c9a0b7e22d3c5;period=2026-11-23T10:00:00Z          started
//	4f1c9a0b7e22d3c5;period=2026-11-23T10:00:00Z;done=1   and finished
//
// The schedule state rides in the nonce, rather than in fields of its own,
// so that every earlier version of leasehold reads these records: versions
// before the schedule state refuse a record with a field they do not know,
// and take the nonce as opaque text. Such a version drops the state when it
// writes the record (its nonce is new and plain): while it contends, a
// period may run twice.
//
// and, after them, the holder's renew interval in milliseconds and whether
// it holds the lease after its task ended (a minimum hold):
//
//	4f1c9a0b7e22d3c5;period=2026-11-23T10:00:00Z;done=1;renew=5625;hold=1
func EncodeNonce(r lease.Record) string {
	s := r.Nonce
	if r.Period != "" {
		s += ";period=" + r.Period
		if r.PeriodDone {
			s += ";done=1"
		}
	}
	if r.RenewInterval > 0 {
		s += ";renew=" + strconv.FormatInt(r.RenewInterval.Milliseconds(), 10)
	}
	if r.Hold {
		s += ";hold=1"
	}
	return s
}

// DecodeNonce sets r's Nonce, Period, PeriodDone, RenewInterval and Hold from the stored nonce
// s (see EncodeNonce) and checks r with Check. Attributes it does not know
// are ignored, as later versions may add some.
func DecodeNonce(s string, r *lease.Record) error {
	nonce, attrs, _ := strings.Cut(s, ";")
	r.Nonce, r.Period, r.PeriodDone, r.RenewInterval, r.Hold = nonce, "", false, 0, false
	for attrs != "" {
		var attr string
		attr, attrs, _ = strings.Cut(attrs, ";")
		switch name, value, _ := strings.Cut(attr, "="); name {
		case "period":
			r.Period = value
		case "done":
			r.PeriodDone = value == "1"
		case "renew":
			ms, err := strconv.ParseInt(value, 10, 64)
			if err != nil || ms <= 0 || ms > math.MaxInt64/int64(time.Millisecond) {
				return Corruptf("renew interval %+.32q is not a positive number of milliseconds", value)
			}
			r.RenewInterval = time.Duration(ms) * time.Millisecond
		case "hold":
			r.Hold = value == "1"
		}
	}
	return Check(*r)
}

// Check reports, wrapping lease.ErrCorrupt, a record that no leasehold
// writer could have written: no valid holder, token 0, a TTL that is not
// positive, no nonce, or a nonce or period key that EncodeNonce could not
// have stored. The CAS engine checks every record its driver
// returns, and every decoder checks what it decodes.
func Check(r lease.Record) error {
	switch {
	case lease.ValidateIdentity(r.Holder) != nil:
		return Corruptf("holder %+.64q is not a valid identity", r.Holder)
	case r.Token == 0:
		return Corruptf("token is 0")
	case r.TTL <= 0 || r.TTL.Milliseconds() <= 0:
		return Corruptf("TTL %v is not positive", r.TTL)
	case r.Nonce == "":
		return Corruptf("nonce is empty")
	case strings.Contains(r.Nonce, ";"):
		return Corruptf("nonce %+.64q holds a ';'", r.Nonce)
	case r.PeriodDone && r.Period == "":
		return Corruptf("a period is done, but none is named")
	}
	if r.Period != "" {
		if err := lease.ValidatePeriod(r.Period); err != nil {
			return Corruptf("period: %v", err)
		}
	}
	return nil
}
