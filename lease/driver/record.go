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
//	{"leasehold":1,"holder":"worker-1","token":7,"ttl_ms":15000,"released":false,"nonce":"4f1c9a0b7e22d3c5;renew=5625"}
//
// and, with annotations (see lease.Annotations; here the runner's, once a
// scheduled job has run under the lease, mirrored into the nonce for
// earlier versions: see EncodeNonce):
//
//	{"leasehold":1,"holder":"worker-1","token":7,"ttl_ms":15000,"released":true,"nonce":"4f1c9a0b7e22d3c5;period=2026-11-23T10:00:00Z;done=1;renew=5625","annotations":{"runner/period":"2026-11-23T10:00:00Z","runner/period-done":"1"}}
type jsonRecord struct {
	Format      int               `json:"leasehold"`
	Holder      string            `json:"holder"`
	Token       uint64            `json:"token"`
	TTLms       int64             `json:"ttl_ms"`
	Released    bool              `json:"released"`
	Nonce       string            `json:"nonce"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// EncodeJSON returns the record's JSON form, one line, without its Version.
// It does not escape "<", ">" and "&", so that the largest record
// (lease.MaxIdentityLen, lease.MaxAnnotationsSize) stays well within
// MaxRecordSize.
func EncodeJSON(r lease.Record) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	err := enc.Encode(jsonRecord{
		Format:      FormatVersion,
		Holder:      r.Holder,
		Token:       r.Token,
		TTLms:       r.TTL.Milliseconds(),
		Released:    r.Released,
		Nonce:       EncodeNonce(r),
		Annotations: r.Annotations.Map(),
	})
	if err != nil {
		panic("lease: encoding a record cannot fail: " + err.Error())
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// DecodeJSON parses a record written by EncodeJSON, of this version, an
// earlier one (with no "annotations", the runner's state in the nonce: see
// DecodeNonce) or a later one (whose added fields it ignores), and checks it
// with Check. Anything else, including a record of another format version,
// yields an error wrapping lease.ErrCorrupt.
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
	return r, DecodeNonce(j.Nonce, lease.NewAnnotations(j.Annotations), j.Annotations != nil, &r)
}

// EncodeNonce returns the text every backend stores as the record's nonce:
// r.Nonce, followed by attributes, each ";name=value". The holder's renew
// interval in milliseconds, which contenders judging expiry read, is one:
//
//	4f1c9a0b7e22d3c5;renew=5625
//
// The others mirror the runner's annotations (lease.AnnotationPeriod,
// AnnotationPeriodDone, AnnotationHold) for versions of leasehold before
// annotations (up to commit 519cf6f), which kept the runner's state only
// here and read it nowhere else:
//
//	4f1c9a0b7e22d3c5;period=2026-11-23T10:00:00Z;renew=5625          started
//	4f1c9a0b7e22d3c5;period=2026-11-23T10:00:00Z;done=1;renew=5625   and finished
//	4f1c9a0b7e22d3c5;period=2026-11-23T10:00:00Z;done=1;renew=5625;hold=1
//
// So a fleet in a rolling upgrade keeps its guarantees: an old process sees
// a period that a new one ran as done, and a minimum hold as a hold. An
// old process that writes the record keeps the runner's state (in the
// nonce) and drops every other annotation: a layer with annotations of its
// own (shards) must not share its leases with such versions. The
// mirror is written for as long as such versions may share a lease with
// this one; a version that drops it must say so in its release notes as a
// version that cannot share a lease with them. A period that
// lease.ValidatePeriod refuses is not mirrored (earlier versions would
// refuse the record), nor a done mark without a period.
func EncodeNonce(r lease.Record) string {
	s := r.Nonce
	if p := r.Annotations.Get(lease.AnnotationPeriod); p != "" && lease.ValidatePeriod(p) == nil {
		s += ";period=" + p
		if r.Annotations.Get(lease.AnnotationPeriodDone) == "1" {
			s += ";done=1"
		}
	}
	if r.RenewInterval > 0 {
		s += ";renew=" + strconv.FormatInt(r.RenewInterval.Milliseconds(), 10)
	}
	if r.Annotations.Get(lease.AnnotationHold) == "1" {
		s += ";hold=1"
	}
	return s
}

// DecodeNonce sets r's Nonce and RenewInterval from the stored nonce s
// (see EncodeNonce), and r's Annotations: stored, the annotations the
// backend stored beside the nonce, or, when it stored none (ok is false: a
// record of a version before annotations, or one without any), the
// runner's state that the nonce's attributes carry. Then it checks r with
// Check. Attributes it does not know are ignored, as later versions may
// add some; those it knows must be as EncodeNonce writes them, whichever
// annotations it keeps, as earlier versions read them.
func DecodeNonce(s string, stored lease.Annotations, ok bool, r *lease.Record) error {
	nonce, attrs, _ := strings.Cut(s, ";")
	r.Nonce, r.RenewInterval = nonce, 0
	var legacy lease.Annotations
	set := func(k, v string) { legacy = legacy.With(k, v) }
	for attrs != "" {
		var attr string
		attr, attrs, _ = strings.Cut(attrs, ";")
		switch name, value, _ := strings.Cut(attr, "="); name {
		case "period":
			if err := lease.ValidatePeriod(value); err != nil {
				return Corruptf("period: %v", err)
			}
			set(lease.AnnotationPeriod, value)
		case "done":
			if value == "1" {
				set(lease.AnnotationPeriodDone, "1")
			}
		case "renew":
			ms, err := strconv.ParseInt(value, 10, 64)
			if err != nil || ms <= 0 || ms > math.MaxInt64/int64(time.Millisecond) {
				return Corruptf("renew interval %+.32q is not a positive number of milliseconds", value)
			}
			r.RenewInterval = time.Duration(ms) * time.Millisecond
		case "hold":
			if value == "1" {
				set(lease.AnnotationHold, "1")
			}
		}
	}
	if legacy.Get(lease.AnnotationPeriodDone) != "" && legacy.Get(lease.AnnotationPeriod) == "" {
		return Corruptf("a period is done, but none is named")
	}
	r.Annotations = legacy
	if ok {
		r.Annotations = stored
	}
	return Check(*r)
}

// Check reports, wrapping lease.ErrCorrupt, a record that no leasehold
// writer could have written: no valid holder, token 0, a TTL that is not
// positive, no nonce, a nonce that EncodeNonce could not have stored, or
// annotations that Annotations.Validate refuses. The CAS engine checks every record its driver
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
	}
	if err := r.Annotations.Validate(); err != nil {
		return Corruptf("%v", err)
	}
	return nil
}

// CarriedOver is what an acquisition carries over from the annotations a
// of the record it takes over: all of them but lease.AnnotationHold and
// lease.AnnotationSuccessor. A minimum hold is its writer's alone;
// carried over, the mark of a holder that died during its hold would say
// that its successor, whose task runs, holds the lease after a run, and a
// trigger that saw it and then found the successor's release would take
// it for a duplicate of a hold (red team 9:
// TestRedteam9StaleHoldOfADeadTermSwallowsATrigger). A handoff names the
// contender that may take the record it is written on, not the next.
func CarriedOver(a lease.Annotations) lease.Annotations {
	return a.With(lease.AnnotationHold, "").With(lease.AnnotationSuccessor, "")
}
