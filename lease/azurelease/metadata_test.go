package azurelease

import (
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/leasehold/leasehold/lease"
)

func TestMetadataRoundTrip(t *testing.T) {
	t.Parallel()
	for _, holder := range []string{"worker-1", " leading and trailing spaces ", "100% sure", "pod/ns:name@host"} {
		r := lease.Record{Holder: holder, Token: 1<<64 - 1, TTL: 15 * time.Second, Released: true, Nonce: "0123456789abcdef"}
		md := encodeMetadata(r)
		for k, v := range md {
			if strings.TrimSpace(*v) != *v || strings.ContainsAny(*v, " \t") {
				t.Errorf("metadata %s=%q: header values must not contain spaces", k, *v)
			}
		}
		got, err := decodeMetadata(md)
		if err != nil || *got != r {
			t.Errorf("decodeMetadata(encodeMetadata(%+v)) = %+v, %v", r, got, err)
		}
	}
}

// TestMetadataWithAnnotations: the annotations take one key of their
// own, in query text fit for an HTTP header, and the runner's are mirrored
// into the nonce, where versions before annotations read them.
func TestMetadataWithAnnotations(t *testing.T) {
	t.Parallel()
	ann := lease.NewAnnotations(map[string]string{lease.AnnotationPeriod: "2026-11-23T11:00:00+01:00", lease.AnnotationPeriodDone: "1", "shard/owner": "wörker 1"})
	r := lease.Record{Holder: "worker-1", Token: 4, TTL: 15 * time.Second, Released: true, Nonce: "0123456789abcdef", Annotations: ann}
	md := encodeMetadata(r)
	if got, want := slices.Sorted(maps.Keys(md)), slices.Sorted(slices.Values(append([]string{keyAnnotations}, metadataKeys...))); !slices.Equal(got, want) {
		t.Errorf("metadata keys %v, want %v", got, want)
	}
	if got := *md[keyNonce]; got != "0123456789abcdef;period=2026-11-23T11:00:00+01:00;done=1" || strings.ContainsAny(got, " \t") {
		t.Errorf("nonce %q, want the nonce with the runner's state appended", got)
	}
	if got := *md[keyAnnotations]; got != "runner%2Fperiod=2026-11-23T11%3A00%3A00%2B01%3A00&runner%2Fperiod-done=1&shard%2Fowner=w%C3%B6rker+1" {
		t.Errorf("annotations %q, want query text", got)
	}
	if got, err := decodeMetadata(md); err != nil || *got != r {
		t.Errorf("decodeMetadata(encodeMetadata(%+v)) = %+v, %v", r, got, err)
	}
	bad := "b%2Fa=1&a%2Fb=2"
	md[keyAnnotations] = &bad
	if _, err := decodeMetadata(md); !errors.Is(err, lease.ErrCorrupt) {
		t.Errorf("decodeMetadata of annotations out of order: %v, want lease.ErrCorrupt", err)
	}
}

// TestMetadataKeyCase: Azure keeps keys case-insensitively and Azurite
// returns them capitalised: any case reads, but the same key twice in two
// cases is corrupt.
func TestMetadataKeyCase(t *testing.T) {
	t.Parallel()
	md := map[string]*string{}
	for k, v := range encodeMetadata(lease.Record{Holder: "worker-1", Token: 7, TTL: 15 * time.Second, Nonce: "n"}) {
		md[strings.ToUpper(k[:1])+k[1:]] = v // Holder, Token, Ttl_ms, ...
	}
	r, err := decodeMetadata(md)
	if err != nil || r.Holder != "worker-1" || r.Token != 7 {
		t.Fatalf("decodeMetadata of capitalised keys: %+v, %v", r, err)
	}
	md["holder"] = md["Holder"]
	if _, err := decodeMetadata(md); !errors.Is(err, lease.ErrCorrupt) {
		t.Errorf("decodeMetadata with holder and Holder: %v, want lease.ErrCorrupt", err)
	}
}

func TestMetadataNone(t *testing.T) {
	t.Parallel()
	if r, err := decodeMetadata(nil); r != nil || err != nil {
		t.Errorf("decodeMetadata(nil) = %v, %v; want no record and no error", r, err)
	}
}

// TestMetadataFromALaterVersion: keys a later version adds are read past
// (rule 11: a fleet in a rolling upgrade reads each other's records), but
// metadata without the marker is still not a record.
func TestMetadataFromALaterVersion(t *testing.T) {
	t.Parallel()
	want := lease.Record{Holder: "worker-1", Token: 7, TTL: 15 * time.Second, Nonce: "n"}
	md := encodeMetadata(want)
	period := "2026-11-23T10:00Z"
	md["period"] = &period
	if got, err := decodeMetadata(md); err != nil || *got != want {
		t.Errorf("decodeMetadata with a later version's key = %+v, %v; want %+v", got, err, want)
	}
	delete(md, keyFormat)
	if got, err := decodeMetadata(md); !errors.Is(err, lease.ErrCorrupt) {
		t.Errorf("decodeMetadata without the %q marker = %+v, %v; want lease.ErrCorrupt", keyFormat, got, err)
	}
}
