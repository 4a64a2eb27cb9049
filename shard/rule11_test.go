package shard

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// The shard objects' rule-11 fixtures, as package lease/internal/rule11
// keeps the lease records': testdata/rule11/<writer>/ holds an assignment
// and an acknowledgement that mean ruleAssignment and ruleAck. "current"
// is what this version writes (LEASEHOLD_RULE11_UPDATE=1 rewrites it);
// "later" is what a later version that appends a field to each may write
// (after MaxPerWorker, written as 0 there, as FenceGen is). "current"
// writes no MaxPerWorker (uncapped): the bytes of the versions before it.
func ruleAssignment() *assignment {
	a := sample()
	a.Fence, a.Expect = true, time.UnixMilli(1_795_000_000_123)
	return a
}

var ruleAck = ack{Format: 1, Token: 3<<32 | 7, Applied: 7<<32 | 3, Lease: 3, Seen: 7<<32 | 5, Nonce: "4f1c9a0b7e22d3c5"}

// TestRule11ShardObjects: this version writes the assignment and the
// acknowledgement as the fixtures hold them, and reads every writer's
// fixtures, those with fields a later version adds included, with their
// meaning (rule 11: a fleet in a rolling upgrade runs two versions).
func TestRule11ShardObjects(t *testing.T) {
	ackJSON, err := json.Marshal(ruleAck)
	if err != nil {
		t.Fatal(err)
	}
	current := map[string][]byte{"assignment": ruleAssignment().encode(), "ack.json": ackJSON}
	for name, b := range current {
		path := filepath.Join("testdata", "rule11", "current", name)
		if os.Getenv("LEASEHOLD_RULE11_UPDATE") == "1" {
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if want, err := os.ReadFile(path); err != nil || string(want) != string(b) {
			t.Errorf("%s: this version writes %q, but the fixture holds %q, %v (a change of the stored form must keep every other writer's reader)", path, b, want, err)
		}
	}
	writers, err := os.ReadDir(filepath.Join("testdata", "rule11"))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range writers {
		dir := filepath.Join("testdata", "rule11", w.Name())
		t.Run(w.Name(), func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join(dir, "assignment"))
			if err != nil {
				t.Fatal(err)
			}
			if a, err := decodeAssignment(b); err != nil || !reflect.DeepEqual(a, ruleAssignment()) {
				t.Errorf("%s/assignment reads as %+v, %v; want %+v", dir, a, err, ruleAssignment())
			}
			if b, err = os.ReadFile(filepath.Join(dir, "ack.json")); err != nil {
				t.Fatal(err)
			}
			if k, err := decodeAck(b); err != nil || k != ruleAck {
				t.Errorf("%s/ack.json reads as %+v, %v; want %+v", dir, k, err, ruleAck)
			}
		})
	}
}
