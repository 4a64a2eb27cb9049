package driver_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
)

func TestDecodeJSONRejects(t *testing.T) {
	valid := `{"leasehold":1,"holder":"worker-1","token":7,"ttl_ms":15000,"released":false,"nonce":"4f1c9a0b7e22d3c5"}`
	for _, tc := range []struct {
		name string
		data string
	}{
		{name: "garbage", data: "not a lease"},
		{name: "empty", data: ""},
		{name: "JSON of another shape", data: `["worker-1", 7]`},
		{name: "JSON null", data: `null`},
		{name: "foreign JSON object", data: `{"holder":"x"}`},
		{name: "foreign JSON object with a leasehold field", data: `{"leasehold":1,"owner":"x","locked":true}`},
		{name: "format 2", data: strings.Replace(valid, `"leasehold":1`, `"leasehold":2`, 1)},
		{name: "format missing", data: strings.Replace(valid, `"leasehold":1,`, ``, 1)},
		{name: "token 0", data: strings.Replace(valid, `"token":7`, `"token":0`, 1)},
		{name: "negative token", data: strings.Replace(valid, `"token":7`, `"token":-1`, 1)},
		{name: "ttl 0", data: strings.Replace(valid, `"ttl_ms":15000`, `"ttl_ms":0`, 1)},
		{name: "negative ttl", data: strings.Replace(valid, `"ttl_ms":15000`, `"ttl_ms":-5`, 1)},
		{name: "missing nonce", data: strings.Replace(valid, `,"nonce":"4f1c9a0b7e22d3c5"`, ``, 1)},
		{name: "empty holder", data: strings.Replace(valid, `"holder":"worker-1"`, `"holder":""`, 1)},
		{name: "non-ASCII holder", data: strings.Replace(valid, `"holder":"worker-1"`, `"holder":"wörker"`, 1)},
		{name: "trailing data", data: valid + `{}`},
		{name: "trailing garbage", data: valid + ` x`},
		{name: "over 4096 bytes", data: valid + strings.Repeat(" ", driver.MaxRecordSize)},
		{name: "period key with a space", data: strings.Replace(valid, `4f1c9a0b7e22d3c5`, `4f1c9a0b7e22d3c5;period=10:00 daily`, 1)},
		{name: "period done but unnamed", data: strings.Replace(valid, `4f1c9a0b7e22d3c5`, `4f1c9a0b7e22d3c5;done=1`, 1)},
		{name: "schedule state with no nonce", data: strings.Replace(valid, `4f1c9a0b7e22d3c5`, `;period=2026-11-23T10:00:00Z`, 1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := driver.DecodeJSON([]byte(tc.data))
			if !errors.Is(err, lease.ErrCorrupt) {
				t.Errorf("DecodeJSON(%.80q) = %+v, %v; want an error matching lease.ErrCorrupt", tc.data, r, err)
			}
		})
	}
}

func TestDecodeJSONAccepts(t *testing.T) {
	for _, tc := range []struct {
		name string
		data string
		want lease.Record
	}{
		{
			name: "the documented example",
			data: `{"leasehold":1,"holder":"worker-1","token":7,"ttl_ms":15000,"released":false,"nonce":"4f1c9a0b7e22d3c5"}`,
			want: lease.Record{Holder: "worker-1", Token: 7, TTL: 15 * time.Second, Nonce: "4f1c9a0b7e22d3c5"},
		},
		{
			name: "fields in another order, with whitespace and a trailing newline",
			data: "{ \"nonce\": \"ab\", \"released\": true, \"ttl_ms\": 2000, \"token\": 18446744073709551615, \"holder\": \"w\", \"leasehold\": 1 }\n",
			want: lease.Record{Holder: "w", Token: math.MaxUint64, TTL: 2 * time.Second, Released: true, Nonce: "ab"},
		},
		{
			// A later version adds fields and keeps "leasehold":1 (rule 11:
			// a fleet in a rolling upgrade reads each other's records).
			name: "fields added by a later version",
			data: `{"leasehold":1,"holder":"worker-1","token":7,"ttl_ms":15000,"released":false,"nonce":"ab","period":"2026-11-23T10:00Z","extra":{"a":[1,2]}}`,
			want: lease.Record{Holder: "worker-1", Token: 7, TTL: 15 * time.Second, Nonce: "ab"},
		},
		{
			name: "a period started",
			data: `{"leasehold":1,"holder":"worker-1","token":7,"ttl_ms":15000,"released":false,"nonce":"ab;period=2026-11-23T10:00:00Z"}`,
			want: lease.Record{Holder: "worker-1", Token: 7, TTL: 15 * time.Second, Nonce: "ab", Annotations: ann(lease.AnnotationPeriod, "2026-11-23T10:00:00Z")},
		},
		{
			name: "a period done, and a nonce attribute added by a later version",
			data: `{"leasehold":1,"holder":"worker-1","token":7,"ttl_ms":15000,"released":true,"nonce":"ab;later=x=y;period=42;done=1;flag"}`,
			want: lease.Record{Holder: "worker-1", Token: 7, TTL: 15 * time.Second, Released: true, Nonce: "ab", Annotations: ann(lease.AnnotationPeriod, "42", lease.AnnotationPeriodDone, "1")},
		},
		{
			name: "annotations stored beside the nonce win over its attributes",
			data: `{"leasehold":1,"holder":"worker-1","token":7,"ttl_ms":15000,"released":false,"nonce":"ab;period=42;done=1;hold=1","annotations":{"shard/epoch":"9","runner/period":"42"}}`,
			want: lease.Record{Holder: "worker-1", Token: 7, TTL: 15 * time.Second, Nonce: "ab", Annotations: ann("shard/epoch", "9", lease.AnnotationPeriod, "42")},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := driver.DecodeJSON([]byte(tc.data))
			if err != nil || got != tc.want {
				t.Errorf("DecodeJSON = %+v, %v; want %+v, nil", got, err, tc.want)
			}
		})
	}
}

func TestJSONRoundTrip(t *testing.T) {
	for _, r := range []lease.Record{
		{Holder: "worker-1", Token: 1, TTL: 15 * time.Second, Nonce: "0123456789abcdef"},
		{Holder: strings.Repeat("h", lease.MaxIdentityLen), Token: math.MaxUint64, TTL: time.Millisecond, Released: true, Nonce: `"quoted" \ nonce`},
		{Holder: "w", Token: 2, TTL: time.Second, Nonce: "n", Annotations: ann(lease.AnnotationPeriod, strings.Repeat("9", lease.MaxPeriodLen))},
		{Holder: "w", Token: 2, TTL: time.Second, Released: true, Nonce: "n", Annotations: ann(lease.AnnotationPeriod, "2026-11-23T11:00:00+01:00", lease.AnnotationPeriodDone, "1", "shard/owner", `<&> "ü"`)},
		largest(),
	} {
		b := driver.EncodeJSON(r)
		if len(b) > driver.MaxRecordSize {
			t.Errorf("EncodeJSON of %+v is %d bytes, over MaxRecordSize", r, len(b))
		}
		got, err := driver.DecodeJSON(b)
		if err != nil || got != r {
			t.Errorf("DecodeJSON(EncodeJSON(%+v)) = %+v, %v; want the record back", r, got, err)
		}
	}
	// The version is the store's, not part of the record's bytes.
	r := lease.Record{Holder: "w", Token: 3, TTL: time.Second, Nonce: "n", Version: "etag-1"}
	if got, _ := driver.DecodeJSON(driver.EncodeJSON(r)); got.Version != "" {
		t.Errorf("Version %q survived encoding, want it left out", got.Version)
	}
	if want := `{"leasehold":1,"holder":"w","token":3,"ttl_ms":1000,"released":false,"nonce":"n"}`; string(driver.EncodeJSON(r)) != want {
		t.Errorf("EncodeJSON = %s, want %s", driver.EncodeJSON(r), want)
	}
}

// largest is the largest record any writer stores: the longest identity
// and period, and the annotations at their bound, each byte of them one
// that JSON escapes.
func largest() lease.Record {
	m := map[string]string{lease.AnnotationPeriod: strings.Repeat("9", lease.MaxPeriodLen), lease.AnnotationPeriodDone: "1", lease.AnnotationHold: "1"}
	size := 0
	for k, v := range m {
		size += len(k) + len(v)
	}
	for i := 0; len(m) < lease.MaxAnnotations; i++ {
		k := fmt.Sprintf("x/%02d", i)
		left := lease.MaxAnnotations - len(m)
		v := strings.Repeat(`"`, (lease.MaxAnnotationsSize-size)/left-len(k))
		m[k] = v
		size += len(k) + len(v)
	}
	return lease.Record{Holder: strings.Repeat(`"`, lease.MaxIdentityLen), Token: math.MaxUint64, TTL: time.Duration(math.MaxInt64 / int64(time.Millisecond) * int64(time.Millisecond)), Nonce: "0123456789abcdef", RenewInterval: time.Hour, Annotations: lease.NewAnnotations(m)}
}

func ann(kv ...string) lease.Annotations {
	m := map[string]string{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return lease.NewAnnotations(m)
}

// TestRecordsReadByEarlierVersions: a record that carries the runner's
// annotations mirrors them into the nonce, where versions before
// annotations (up to 519cf6f) read them; their decoders read past the
// added "annotations" field. The fixtures in testdata/rule11 show it with
// those versions' own decoders (see lease/internal/rule11).
func TestRecordsReadByEarlierVersions(t *testing.T) {
	r := lease.Record{Holder: "w", Token: 3, TTL: time.Second, Nonce: "4f1c9a0b7e22d3c5", RenewInterval: 375 * time.Millisecond,
		Annotations: ann(lease.AnnotationPeriod, "2026-11-23T10:00:00Z", lease.AnnotationPeriodDone, "1", lease.AnnotationHold, "1")}
	b := driver.EncodeJSON(r)
	if back, err := driver.DecodeJSON(b); err != nil || back != r {
		t.Errorf("DecodeJSON(EncodeJSON(%+v)) = %+v, %v", r, back, err)
	}
	var old struct {
		Format   int    `json:"leasehold"`
		Holder   string `json:"holder"`
		Token    uint64 `json:"token"`
		TTLms    int64  `json:"ttl_ms"`
		Released bool   `json:"released"`
		Nonce    string `json:"nonce"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&old); err != nil {
		t.Fatalf("the previous format's decoder refuses %s: %v", b, err)
	}
	if old.Nonce != "4f1c9a0b7e22d3c5;period=2026-11-23T10:00:00Z;done=1;renew=375;hold=1" {
		t.Errorf("stored nonce %q, want the nonce with the schedule state, the renew interval and the hold appended", old.Nonce)
	}
	// The previous version (0b9a375) read the text before the first ';' as
	// the nonce and ignored attributes it did not know: it sees the same
	// nonce and schedule state, and takes the renew interval as unknown.
	prev, _, _ := strings.Cut(old.Nonce, ";")
	if prev != r.Nonce || strings.Contains(prev, ";") {
		t.Errorf("the previous version's nonce would be %q, want %q", prev, r.Nonce)
	}
	r.RenewInterval, r.Annotations = 0, lease.Annotations{}
	b = driver.EncodeJSON(r)
	if back, err := driver.DecodeJSON(b); err != nil || back.RenewInterval != 0 {
		t.Errorf("a record without the renew interval decodes as %+v, %v; want RenewInterval 0 (the reader assumes the default)", back, err)
	}
}

func TestRecordCheck(t *testing.T) {
	ok := lease.Record{Holder: "w", Token: 1, TTL: time.Millisecond, Nonce: "n"}
	if err := driver.Check(ok); err != nil {
		t.Errorf("Check(%+v) = %v, want nil", ok, err)
	}
	for _, tc := range []struct {
		name   string
		change func(*lease.Record)
	}{
		{name: "no holder", change: func(r *lease.Record) { r.Holder = "" }},
		{name: "token 0", change: func(r *lease.Record) { r.Token = 0 }},
		{name: "TTL below a millisecond", change: func(r *lease.Record) { r.TTL = time.Microsecond }},
		{name: "negative TTL", change: func(r *lease.Record) { r.TTL = -time.Second }},
		{name: "no nonce", change: func(r *lease.Record) { r.Nonce = "" }},
		{name: "nonce with a ';'", change: func(r *lease.Record) { r.Nonce = "n;period=1" }},
		{name: "bad annotation key", change: func(r *lease.Record) { r.Annotations = ann("period", "1") }},
		{name: "annotations over the bound", change: func(r *lease.Record) { r.Annotations = ann("a/b", strings.Repeat("x", lease.MaxAnnotationsSize)) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := ok
			tc.change(&r)
			if err := driver.Check(r); !errors.Is(err, lease.ErrCorrupt) {
				t.Errorf("Check(%+v) = %v, want an error matching lease.ErrCorrupt", r, err)
			}
		})
	}
}

func TestRecordHeldAndTermExpires(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    lease.Record
		want bool
	}{
		{name: "held", r: lease.Record{Holder: "w", Token: 1}, want: true},
		{name: "released", r: lease.Record{Holder: "w", Token: 1, Released: true}, want: false},
		{name: "no record", r: lease.Record{}, want: false},
	} {
		if got := tc.r.Held(); got != tc.want {
			t.Errorf("%s: Held() = %t, want %t", tc.name, got, tc.want)
		}
	}
	sent := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if got := (lease.Term{Sent: sent, TTL: 15 * time.Second}).Expires(); !got.Equal(sent.Add(15 * time.Second)) {
		t.Errorf("Expires() = %v, want Sent+TTL", got)
	}
}

// TestDecodeNonceRenewInterval: a renew interval that no writer could
// have stored makes the record corrupt; an attribute it does not know is
// ignored (rule 11).
func TestDecodeNonceRenewInterval(t *testing.T) {
	for _, bad := range []string{"n;renew=", "n;renew=abc", "n;renew=0", "n;renew=-5", "n;renew=99999999999999999999"} {
		var r lease.Record
		r.Holder, r.Token, r.TTL = "w", 1, time.Second
		if err := driver.DecodeNonce(bad, lease.Annotations{}, false, &r); !errors.Is(err, lease.ErrCorrupt) {
			t.Errorf("DecodeNonce(%q) = %v, want lease.ErrCorrupt", bad, err)
		}
	}
	r := lease.Record{Holder: "w", Token: 1, TTL: time.Second}
	if err := driver.DecodeNonce("n;renew=375;later=x", lease.Annotations{}, false, &r); err != nil || r.RenewInterval != 375*time.Millisecond || r.Nonce != "n" {
		t.Errorf("DecodeNonce with a later attribute: %+v, %v; want renew 375ms, nonce n", r, err)
	}
}
