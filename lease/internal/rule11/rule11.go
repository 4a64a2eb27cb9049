// Package rule11 shows that lease records stay readable across versions
// (rule 11 of the design: a fleet in a rolling upgrade runs two versions
// against one record). Each backend's codec writes a fixed set of records
// into its testdata/rule11/<writer>/ folder, one file per case, and reads
// every other writer's files back with their meaning: holder, token, TTL,
// released, renew interval and the runner's schedule state (period, done
// mark, minimum hold).
//
// The writers are this version ("current") and commit 519cf6f, the last
// before annotations, which kept the schedule state in core fields and in
// the nonce. This package and the backends' rule11_test.go files compile
// against both: the one thing that differs, how a version stores the
// schedule state, is schedule.go here and testdata/v519cf6f/schedule.go.txt
// for 519cf6f. TestOldVersion (in old_test.go) extracts 519cf6f with git,
// puts these files into it, and runs its decoders on this version's files
// (the reverse direction); with LEASEHOLD_RULE11_UPDATE=1 it rewrites the
// 519cf6f files with that version's encoders.
package rule11

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/leasehold/leasehold/lease"
)

// Codec is one backend's record encoding, as bytes a fixture file holds.
type Codec struct {
	// Encode writes a record as the backend stores it.
	Encode func(lease.Record) ([]byte, error)
	// Decode reads a stored record back.
	Decode func([]byte) (lease.Record, error)
}

// Case is one record's meaning, in the terms every version understands.
type Case struct {
	// Holder is the identity the record names.
	Holder string
	// Token is the record's fencing token.
	Token uint64
	// TTL is the holder's time to live.
	TTL time.Duration
	// Released reports that the holder gave the lease up.
	Released bool
	// Renew is the holder's renew interval, as the record stores it.
	Renew time.Duration
	// Period is the runner's scheduled period the record names.
	Period string
	// Done is the runner's done mark for Period.
	Done bool
	// Hold reports that the record is held only for a minimum hold.
	Hold bool
	// Others are annotations of layers other than the runner: only
	// versions with annotations write and read them.
	Others map[string]string
}

// nonce is every fixture's nonce, so that encoding is repeatable.
const nonce = "4f1c9a0b7e22d3c5"

// Cases are the records every writer writes, by file name.
var Cases = map[string]Case{
	"held":                   {Holder: "worker-1", Token: 7, TTL: 15 * time.Second, Renew: 5625 * time.Millisecond},
	"period-started":         {Holder: "worker-1", Token: 8, TTL: 15 * time.Second, Renew: 5625 * time.Millisecond, Period: "2026-11-23T10:00:00Z"},
	"period-done-released":   {Holder: "worker-1", Token: 8, TTL: 15 * time.Second, Released: true, Renew: 5625 * time.Millisecond, Period: "2026-11-23T10:00:00Z", Done: true},
	"period-done-min-hold":   {Holder: "host-2 pid 77", Token: 9, TTL: 15 * time.Second, Renew: 5625 * time.Millisecond, Period: "2026-11-23T11:00:00+01:00", Done: true, Hold: true},
	"period-failed-released": {Holder: "worker-1", Token: 10, TTL: 3 * time.Second, Released: true, Renew: time.Second, Period: "42"},
	"annotated":              {Holder: "worker-3", Token: 11, TTL: 15 * time.Second, Renew: 5625 * time.Millisecond, Period: "2026-11-23T10:00:00Z", Done: true, Others: map[string]string{"shard/epoch": "12", "shard/owner": `wörker "3" <&>`}},
}

// Run writes (or, without LEASEHOLD_RULE11_UPDATE=1, compares) this
// version's files in dir/<Writer> (dir is LEASEHOLD_RULE11_DIR when set, as
// TestOldVersion sets it), and reads every other writer's files in
// dir with c.Decode, checking each record's meaning.
func Run(t *testing.T, dir string, c Codec) {
	t.Helper()
	if d := os.Getenv("LEASEHOLD_RULE11_DIR"); d != "" {
		dir = d
	}
	update := os.Getenv("LEASEHOLD_RULE11_UPDATE") == "1"
	for _, name := range slices.Sorted(maps.Keys(Cases)) {
		cs := Cases[name]
		r := lease.Record{Holder: cs.Holder, Token: cs.Token, TTL: cs.TTL, Released: cs.Released, Nonce: nonce, RenewInterval: cs.Renew}
		r, ok := withSchedule(r, cs)
		if !ok {
			continue
		}
		b, err := c.Encode(r)
		if err != nil {
			t.Fatalf("%s: encoding %+v: %v", name, r, err)
		}
		path := filepath.Join(dir, Writer, name+".json")
		if update {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%s: %v (LEASEHOLD_RULE11_UPDATE=1 writes it)", name, err)
		}
		if !bytes.Equal(append(b, '\n'), want) {
			t.Errorf("%s: this version writes\n%s\nbut %s holds\n%s\n(a change of the stored form must keep every other writer's reader: see package rule11)", name, b, path, want)
		}
	}
	writers, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	read := 0
	for _, w := range writers {
		if !w.IsDir() || w.Name() == Writer {
			continue
		}
		files, err := fs.Glob(os.DirFS(filepath.Join(dir, w.Name())), "*.json")
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			name := strings.TrimSuffix(f, ".json")
			cs, ok := Cases[name]
			if !ok {
				t.Errorf("%s/%s: no such case", w.Name(), f)
				continue
			}
			b, err := os.ReadFile(filepath.Join(dir, w.Name(), f))
			if err != nil {
				t.Fatal(err)
			}
			r, err := c.Decode(bytes.TrimSuffix(b, []byte("\n")))
			if err != nil {
				t.Errorf("%s/%s: this version (%s) cannot read it: %v", w.Name(), f, Writer, err)
				continue
			}
			check(t, w.Name()+"/"+f, r, cs)
			read++
		}
	}
	if read == 0 && !update {
		t.Errorf("%s: no other writer's files to read", dir)
	}
}

// check compares a decoded record with its case.
func check(t *testing.T, what string, r lease.Record, cs Case) {
	t.Helper()
	period, done, hold, others := scheduleOf(r)
	got := Case{Holder: r.Holder, Token: r.Token, TTL: r.TTL, Released: r.Released, Renew: r.RenewInterval, Period: period, Done: done, Hold: hold, Others: others}
	want := cs
	if !seesOthers {
		want.Others = nil
	}
	if r.Nonce != nonce || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%s: read as %+v (nonce %q), want %+v (nonce %q)", what, got, r.Nonce, want, nonce)
	}
}

// ItemJSON returns a DynamoDB item in DynamoDB's JSON form, for the types
// lease items use (S, N, BOOL, M).
func ItemJSON(item map[string]types.AttributeValue) ([]byte, error) {
	v, err := toJSON(&types.AttributeValueMemberM{Value: item})
	if err != nil {
		return nil, err
	}
	return json.Marshal(v["M"])
}

func toJSON(av types.AttributeValue) (map[string]any, error) {
	switch v := av.(type) {
	case *types.AttributeValueMemberS:
		return map[string]any{"S": v.Value}, nil
	case *types.AttributeValueMemberN:
		return map[string]any{"N": v.Value}, nil
	case *types.AttributeValueMemberBOOL:
		return map[string]any{"BOOL": v.Value}, nil
	case *types.AttributeValueMemberM:
		m := map[string]any{}
		for k, e := range v.Value {
			j, err := toJSON(e)
			if err != nil {
				return nil, err
			}
			m[k] = j
		}
		return map[string]any{"M": m}, nil
	}
	return nil, fmt.Errorf("attribute value %T is not one a lease item holds", av)
}

// ParseItemJSON reads what ItemJSON writes.
func ParseItemJSON(b []byte) (map[string]types.AttributeValue, error) {
	var m map[string]map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	item := map[string]types.AttributeValue{}
	for k, typed := range m {
		v, err := fromJSON(typed)
		if err != nil {
			return nil, fmt.Errorf("attribute %q: %w", k, err)
		}
		item[k] = v
	}
	return item, nil
}

func fromJSON(typed map[string]json.RawMessage) (types.AttributeValue, error) {
	if len(typed) != 1 {
		return nil, errors.New("want one type per value")
	}
	for typ, raw := range typed {
		switch typ {
		case "S", "N":
			var s string
			if err := json.Unmarshal(raw, &s); err != nil {
				return nil, err
			}
			if typ == "S" {
				return &types.AttributeValueMemberS{Value: s}, nil
			}
			return &types.AttributeValueMemberN{Value: s}, nil
		case "BOOL":
			var b bool
			if err := json.Unmarshal(raw, &b); err != nil {
				return nil, err
			}
			return &types.AttributeValueMemberBOOL{Value: b}, nil
		case "M":
			var m map[string]json.RawMessage
			if err := json.Unmarshal(raw, &m); err != nil {
				return nil, err
			}
			b, _ := json.Marshal(m)
			item, err := ParseItemJSON(b)
			if err != nil {
				return nil, err
			}
			return &types.AttributeValueMemberM{Value: item}, nil
		}
		return nil, fmt.Errorf("type %q is not one a lease item holds", typ)
	}
	panic("unreachable")
}
