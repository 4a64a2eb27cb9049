package lease

import (
	"fmt"
	"iter"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Annotations are the record's one extension point: state that the layers
// above this package (the runner's schedule, shard assignments) keep in a
// lease's record, beside what the lease itself needs. The engine stores them
// with every write, carries them over from the record it follows (a
// takeover, an acquisition after a release, a break keep them), compares
// them as part of the record, and never reads their meaning.
//
// A key is "namespace/name": the namespace names the layer that owns the
// key ("runner", "shard"), and only that layer writes it. Namespace and
// name are each one or more lowercase ASCII letters, digits and "-._", the
// whole key at most MaxAnnotationKeyLen bytes. A value is UTF-8 text
// without control characters; an empty value is not stored (the key is
// absent). A record carries at most MaxAnnotations keys, with at most
// MaxAnnotationsSize bytes of keys and values in all, so that every
// backend's encoding of a record stays within what every version's
// decoders accept (see Validate).
//
// Annotations are a value, like a string: the zero value holds none, With
// returns a changed copy, and two are equal (==) when they hold the same
// keys and values, so Records and Terms stay comparable.
type Annotations struct {
	enc string // url.Values.Encode of the keys and values: sorted by key
}

// NewAnnotations returns annotations holding m's keys and values, leaving
// out those whose value is empty. It does not validate them (see
// Validate).
func NewAnnotations(m map[string]string) Annotations {
	v := make(url.Values, len(m))
	for k, val := range m {
		if val != "" {
			v[k] = []string{val}
		}
	}
	return Annotations{enc: v.Encode()}
}

// ParseAnnotations parses the text String returns. Text that String could
// not have returned (a key twice, a bad escape) is an error naming it.
func ParseAnnotations(s string) (Annotations, error) {
	v, err := url.ParseQuery(s)
	if err != nil {
		return Annotations{}, fmt.Errorf("annotations %s: %w", quote(s), err)
	}
	for k, vals := range v {
		if len(vals) != 1 || vals[0] == "" {
			return Annotations{}, fmt.Errorf("annotations %s: key %s has %d values, want one that is not empty", quote(s), quote(k), len(vals))
		}
	}
	a := Annotations{enc: v.Encode()}
	if a.enc != s {
		return Annotations{}, fmt.Errorf("annotations %s are not in canonical form (sorted keys, query escapes): want %s", quote(s), quote(a.enc))
	}
	return a, nil
}

// String returns the annotations as URL query text, keys sorted
// ("runner%2Fperiod=2026-11-23T10%3A00%3A00Z"), "" when there are none.
// ParseAnnotations reads it back.
func (a Annotations) String() string { return a.enc }

// values returns the parsed annotations; enc is always well formed.
func (a Annotations) values() url.Values {
	v, _ := url.ParseQuery(a.enc)
	return v
}

// pairs yields the keys and values in enc's order, sorted by key, reading
// enc in place: enc is canonical (one value a key, well-formed escapes),
// and the engine, the runner and a quorum read annotations at every call,
// where parsing them into a map was most of a simulation's time.
func (a Annotations) pairs(yield func(string, string) bool) {
	for rest := a.enc; rest != ""; {
		var pair string
		pair, rest, _ = strings.Cut(rest, "&")
		k, v, _ := strings.Cut(pair, "=")
		k, _ = url.QueryUnescape(k)
		v, _ = url.QueryUnescape(v)
		if !yield(k, v) {
			return
		}
	}
}

// Get returns the value of key, or "" if it has none.
func (a Annotations) Get(key string) string {
	for k, v := range a.pairs {
		if k == key {
			return v
		}
	}
	return ""
}

// With returns a copy of a with key set to value, or deleted when value is
// "".
func (a Annotations) With(key, value string) Annotations {
	v := a.values()
	if value == "" {
		v.Del(key)
	} else {
		v.Set(key, value)
	}
	return Annotations{enc: v.Encode()}
}

// Len returns the number of keys.
func (a Annotations) Len() int {
	if a.enc == "" {
		return 0
	}
	return strings.Count(a.enc, "&") + 1
}

// All yields the keys and values, sorted by key.
func (a Annotations) All() iter.Seq2[string, string] { return a.pairs }

// Map returns the keys and values as a new map, nil when there are none.
func (a Annotations) Map() map[string]string {
	if a.enc == "" {
		return nil
	}
	m := map[string]string{}
	for k, v := range a.All() {
		m[k] = v
	}
	return m
}

// The bounds of Annotations. With them, the largest record (an identity of
// MaxIdentityLen, annotations at their bound) encodes within
// driver.MaxRecordSize, which every version's decoders accept.
const (
	// MaxAnnotations is the most keys a record carries.
	MaxAnnotations = 16
	// MaxAnnotationKeyLen is the longest key, in bytes.
	MaxAnnotationKeyLen = 63
	// MaxAnnotationsSize is the most bytes of keys and values, together,
	// a record carries.
	MaxAnnotationsSize = 1024
)

// The runner's annotation keys (runner.Config.Period and MinHold). They are
// declared here, not in the runner, because records written before
// annotations existed carried this state in their nonce, and the record
// codec in lease/driver still reads and writes it there for them (see
// driver.EncodeNonce): it must know these keys. Their values are a period
// key (ValidatePeriod), and "1" for a flag that is set.
const (
	// AnnotationPeriod is the key of the latest scheduled period a holder
	// started its task for.
	AnnotationPeriod = "runner/period"
	// AnnotationPeriodDone is "1" when the task of AnnotationPeriod
	// finished successfully.
	AnnotationPeriodDone = "runner/period-done"
	// AnnotationHold is "1" while the holder's task has ended and the lease
	// is held only to keep others out for the rest of a minimum hold. It
	// is its writer's alone: an acquisition does not carry it over.
	AnnotationHold = "runner/hold"
)

// AnnotationBroken is "1" on a record that an operator's Break freed
// (Breaker): its holder neither released it nor let it lapse, and may run
// until its next renewal finds it lost. The acquisition that takes such a
// record over carries it over, as every annotation, so that its Term
// shows it; the term's own writes (Term.Record: renewals, keeps, its
// release) never carry it. A layer that learns from the record it took
// over that its previous holder had ended (shard's assigner) must not
// conclude so from a broken one. On Azure Blob, whose native break writes
// no metadata, the acquisition that follows a break writes it.
const AnnotationBroken = "lease/broken"

// AnnotationSuccessor names, on a record still held by the holder that
// wrote it, the contender that holder handed the lease to (Handoffer's
// ReleaseTo): that contender may take the record over at once, and every
// other one waits for it as for any held record. It is its writer's alone:
// an acquisition does not carry it over, and a break removes it.
const AnnotationSuccessor = "lease/successor"

// Validate reports, as an *OptionError naming the key, the first of a's
// annotations that cannot be stored: a key of the wrong form or length, a
// value with a control character or invalid UTF-8, more than
// MaxAnnotations keys, or more than MaxAnnotationsSize bytes of keys and
// values.
func (a Annotations) Validate() error {
	size, n := 0, 0
	for k, v := range a.All() {
		n++
		field := "Annotations[" + quote(k) + "]"
		if err := validateAnnotationKey(k); err != "" {
			return &OptionError{Field: field, Value: quote(k), Reason: err}
		}
		switch {
		case !utf8.ValidString(v):
			return &OptionError{Field: field, Value: quote(v), Reason: "is not UTF-8 text"}
		case hasControl(v):
			return &OptionError{Field: field, Value: quote(v), Reason: "holds a control character"}
		}
		size += len(k) + len(v)
		if size > MaxAnnotationsSize {
			return &OptionError{Field: field, Value: strconv.Itoa(len(k)+len(v)) + " bytes", Reason: "brings the annotations to " + strconv.Itoa(size) + " bytes of keys and values; at most " + strconv.Itoa(MaxAnnotationsSize) + " are allowed"}
		}
	}
	if n > MaxAnnotations {
		return &OptionError{Field: "Annotations", Value: strconv.Itoa(n) + " keys", Reason: "at most " + strconv.Itoa(MaxAnnotations) + " are allowed"}
	}
	return nil
}

// validateAnnotationKey returns why k is not an annotation key, or "".
func validateAnnotationKey(k string) string {
	if len(k) > MaxAnnotationKeyLen {
		return "is " + strconv.Itoa(len(k)) + " bytes long; at most " + strconv.Itoa(MaxAnnotationKeyLen) + " are allowed"
	}
	slash := 0
	for i := 0; i < len(k); i++ {
		c := k[i]
		switch {
		case c == '/':
			if slash > 0 {
				return `has more than one "/"`
			}
			slash = i
		case !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_'):
			return `may hold only lowercase ASCII letters, digits, "-._" and one "/"`
		}
	}
	if slash == 0 || slash == len(k)-1 {
		return `must be "namespace/name", both parts non-empty`
	}
	return ""
}

func hasControl(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f || 0x80 <= r && r < 0xa0 {
			return true
		}
	}
	return false
}
