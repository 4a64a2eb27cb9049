package lease_test

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/leasehold/leasehold/lease"
)

func TestAnnotationsValidate(t *testing.T) {
	many := map[string]string{}
	for i := range lease.MaxAnnotations + 1 {
		many[fmt.Sprintf("shard/k%02d", i)] = "1"
	}
	atBound := map[string]string{"shard/a": strings.Repeat("v", lease.MaxAnnotationsSize-len("shard/a"))}
	for _, tc := range []struct {
		name string
		m    map[string]string
		want string // a part of the error, "" for none
	}{
		{name: "none", m: nil},
		{name: "the runner's", m: map[string]string{lease.AnnotationPeriod: "2026-11-23T10:00:00Z", lease.AnnotationPeriodDone: "1", lease.AnnotationHold: "1"}},
		{name: "any text as value", m: map[string]string{"shard/owner": `wörker "3" <&> ;=%`}},
		{name: "at the size bound", m: atBound},
		{name: "longest key", m: map[string]string{"a/" + strings.Repeat("b", lease.MaxAnnotationKeyLen-2): "1"}},
		{name: "no namespace", m: map[string]string{"period": "1"}, want: `Annotations["period"]`},
		{name: "empty name", m: map[string]string{"runner/": "1"}, want: `both parts non-empty`},
		{name: "two slashes", m: map[string]string{"a/b/c": "1"}, want: `more than one "/"`},
		{name: "capital", m: map[string]string{"Runner/period": "1"}, want: "lowercase"},
		{name: "key too long", m: map[string]string{"a/" + strings.Repeat("b", lease.MaxAnnotationKeyLen-1): "1"}, want: "64 bytes long; at most 63"},
		{name: "control character", m: map[string]string{"a/b": "x\ny"}, want: `Annotations["a/b"]`},
		{name: "not UTF-8", m: map[string]string{"a/b": "\xff"}, want: "not UTF-8"},
		{name: "over the size bound", m: map[string]string{"shard/a": atBound["shard/a"] + "v"}, want: `Annotations["shard/a"] (1025 bytes) brings the annotations to 1025 bytes`},
		{name: "too many keys", m: many, want: "17 keys"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := lease.NewAnnotations(tc.m).Validate()
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("Validate() = %v, want nil", err)
			case tc.want != "" && (!errors.Is(err, lease.ErrInvalid) || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("Validate() = %v, want an error matching lease.ErrInvalid that says %q", err, tc.want)
			}
		})
	}
}

func TestAnnotationsValue(t *testing.T) {
	a := lease.NewAnnotations(map[string]string{"shard/b": "2", "runner/period": "10:00", "shard/empty": ""})
	if a.Len() != 2 || a.Get("shard/b") != "2" || a.Get("shard/empty") != "" {
		t.Errorf("NewAnnotations: %q, want two keys, the empty value left out", a)
	}
	if got, want := a.String(), "runner%2Fperiod=10%3A00&shard%2Fb=2"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if b, err := lease.ParseAnnotations(a.String()); err != nil || b != a {
		t.Errorf("ParseAnnotations(%q) = %q, %v; want it back", a.String(), b, err)
	}
	for _, bad := range []string{"shard%2Fb=2&runner%2Fperiod=1", "a%2Fb=1&a%2Fb=2", "a%2Fb=", "a%2Fb=%zz", "a/b=1"} {
		if _, err := lease.ParseAnnotations(bad); err == nil {
			t.Errorf("ParseAnnotations(%q) = nil error, want one: String could not have written it", bad)
		}
	}
	b := a.With("shard/b", "3").With("runner/period", "")
	if a.Get("shard/b") != "2" || b.Get("shard/b") != "3" || b.Len() != 1 {
		t.Errorf("With changed %q into %q; want a unchanged and b with one key", a, b)
	}
	if a.With("shard/b", "").With("runner/period", "") != (lease.Annotations{}) {
		t.Error("deleting every key does not give the zero Annotations")
	}
	var keys []string
	for k := range a.All() {
		keys = append(keys, k)
	}
	if strings.Join(keys, ",") != "runner/period,shard/b" {
		t.Errorf("All yields %v, want the keys sorted", keys)
	}
}

func TestTermRecordAndAnnotate(t *testing.T) {
	t1 := lease.Term{Holder: "w", Token: 3, TTL: 15e9, Version: "v1"}
	t2 := t1.Annotate(lease.AnnotationPeriod, "42")
	if t1.Annotations.Len() != 0 || t2.Annotations.Get(lease.AnnotationPeriod) != "42" {
		t.Errorf("Annotate: t1 %q, t2 %q; want t1 unchanged", t1.Annotations, t2.Annotations)
	}
	want := lease.Record{Holder: "w", Token: 3, TTL: 15e9, Annotations: t2.Annotations}
	if got := t2.Record(); got != want {
		t.Errorf("Record() = %+v, want %+v", got, want)
	}
}

// FuzzParseAnnotations: whatever annotation text a record carries (Azure
// keeps it in the blob's metadata), ParseAnnotations must not panic, and
// must accept only text that String writes back as it is, holding keys
// that NewAnnotations of its Map keeps. Seeds:
// testdata/fuzz/FuzzParseAnnotations.
func FuzzParseAnnotations(f *testing.F) {
	for _, s := range []string{
		"",
		"runner%2Fperiod=2026-11-23T10%3A00%3A00Z&runner%2Fperiod-done=1",
		"shard%2Fterm=7+worker-1",
		"b=1&a=2",
		"a=1&a=2",
		"a=",
		"%zz=1",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := lease.ParseAnnotations(s)
		if err != nil {
			if a != (lease.Annotations{}) {
				t.Fatalf("ParseAnnotations(%q) = %v, %v; want no annotations with the error", s, a, err)
			}
			return
		}
		if a.String() != s {
			t.Fatalf("ParseAnnotations(%q) = %q: not the text read", s, a.String())
		}
		if again := lease.NewAnnotations(a.Map()); again != a {
			t.Fatalf("ParseAnnotations(%q) = %q, but NewAnnotations of its Map is %q", s, a, again)
		}
		// Get, Len and All read the text in place: they must say what a
		// parse of it says.
		v, _ := url.ParseQuery(s)
		if a.Len() != len(v) || len(a.Map()) != len(v) {
			t.Fatalf("ParseAnnotations(%q): Len %d, Map %v; the text holds %d keys", s, a.Len(), a.Map(), len(v))
		}
		for k := range v {
			if a.Get(k) != v.Get(k) {
				t.Fatalf("ParseAnnotations(%q).Get(%q) = %q, want %q", s, k, a.Get(k), v.Get(k))
			}
		}
	})
}
