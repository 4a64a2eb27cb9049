package azurelease

import (
	"maps"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
)

// The blob's metadata keys: the record, one field a key. Azure keeps
// metadata keys case-insensitively and may return them in another case
// (Azurite capitalises them), so they are compared case-insensitively.
const (
	keyFormat   = "leasehold" // driver.FormatVersion, "1"
	keyHolder   = "holder"    // the identity, percent-encoded
	keyToken    = "token"     // the fencing token, decimal
	keyTTL      = "ttl_ms"    // the holder's TTL in milliseconds, decimal
	keyReleased = "released"  // "true" or "false"
	keyNonce    = "nonce"     // fresh random text, new with every write, and attributes (driver.EncodeNonce)
	// keyAnnotations holds lease.Annotations as URL query text
	// (Annotations.String), absent when there are none. It is not among
	// metadataKeys: blobs of versions before annotations have none.
	keyAnnotations = "annotations"
)

var metadataKeys = []string{keyFormat, keyHolder, keyToken, keyTTL, keyReleased, keyNonce}

// encodeMetadata returns r as blob metadata. The holder is percent-encoded
// as a URL path segment: metadata values travel as HTTP header values, which
// lose leading and trailing spaces, and identities may have them.
func encodeMetadata(r lease.Record) map[string]*string {
	md := map[string]string{
		keyFormat:   strconv.Itoa(driver.FormatVersion),
		keyHolder:   url.PathEscape(r.Holder),
		keyToken:    strconv.FormatUint(r.Token, 10),
		keyTTL:      strconv.FormatInt(r.TTL.Milliseconds(), 10),
		keyReleased: strconv.FormatBool(r.Released),
		keyNonce:    driver.EncodeNonce(r),
	}
	if r.Annotations.Len() > 0 {
		md[keyAnnotations] = r.Annotations.String()
	}
	out := make(map[string]*string, len(md))
	for k, v := range md {
		out[k] = &v
	}
	return out
}

// decodeMetadata returns the record the blob's metadata holds, without its
// Version, or nil when the blob has no metadata at all (it was created but
// never acquired). Keys that this version does not write are ignored when
// the "leasehold" marker has this version's value: a later version adds
// keys (see driver.FormatVersion). Metadata that leasehold did not write
// (no "leasehold" marker, another format version, a key of this version's
// missing, a value it could not have written) yields an error wrapping
// lease.ErrCorrupt.
func decodeMetadata(md map[string]*string) (*lease.Record, error) {
	if len(md) == 0 {
		return nil, nil
	}
	vals := make(map[string]string, len(md))
	for k, v := range md {
		lk := strings.ToLower(k)
		if !slices.Contains(metadataKeys, lk) && lk != keyAnnotations {
			continue
		}
		if _, dup := vals[lk]; dup {
			return nil, driver.Corruptf("metadata key %q appears twice, in different cases", lk)
		}
		if v == nil {
			vals[lk] = ""
		} else {
			vals[lk] = *v
		}
	}
	format, marked := vals[keyFormat]
	switch {
	case !marked:
		return nil, driver.Corruptf("the blob's metadata (keys %s) has no %q key: leasehold did not write it", strings.Join(slices.Sorted(maps.Keys(md)), ", "), keyFormat)
	case format != strconv.Itoa(driver.FormatVersion):
		return nil, driver.Corruptf("metadata %q is %q, want %d", keyFormat, format, driver.FormatVersion)
	}
	for _, k := range metadataKeys {
		if _, ok := vals[k]; !ok {
			return nil, driver.Corruptf("metadata has no %q key", k)
		}
	}
	holder, err := url.PathUnescape(vals[keyHolder])
	if err != nil {
		return nil, driver.Corruptf("metadata %q is %q, not percent-encoded text: %v", keyHolder, vals[keyHolder], err)
	}
	token, err := strconv.ParseUint(vals[keyToken], 10, 64)
	if err != nil {
		return nil, driver.Corruptf("metadata %q is %q, not a fencing token", keyToken, vals[keyToken])
	}
	ttl, err := strconv.ParseInt(vals[keyTTL], 10, 64)
	if err != nil || ttl > math.MaxInt64/int64(time.Millisecond) || ttl < math.MinInt64/int64(time.Millisecond) {
		return nil, driver.Corruptf("metadata %q is %q, not a number of milliseconds", keyTTL, vals[keyTTL])
	}
	var released bool
	switch vals[keyReleased] {
	case "true":
		released = true
	case "false":
	default:
		return nil, driver.Corruptf("metadata %q is %q, want true or false", keyReleased, vals[keyReleased])
	}
	r := lease.Record{
		Holder:   holder,
		Token:    token,
		TTL:      time.Duration(ttl) * time.Millisecond,
		Released: released,
	}
	text, ok := vals[keyAnnotations]
	ann, err := lease.ParseAnnotations(text)
	if err != nil {
		return nil, driver.Corruptf("metadata %q: %v", keyAnnotations, err)
	}
	if err := driver.DecodeNonce(vals[keyNonce], ann, ok, &r); err != nil {
		return nil, err
	}
	return &r, nil
}
