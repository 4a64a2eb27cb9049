package oracle

import "testing"

// TestCrowded: under a cap of 1, a worker that starts a second shard
// while it runs one is a violation; one that starts it after the first
// ended is not, nor is a process started again under the identity of a
// killed one whose shard's end is reported late.
func TestCrowded(t *testing.T) {
	o := New(3)
	o.LimitPerWorker(1)
	o.Start("a", 0, 1)
	o.End("a", 0)
	o.Start("a", 1, 2)
	if o.Crowded() != 0 {
		t.Fatalf("a slot started after the first ended: crowded %d", o.Crowded())
	}
	o.Crash("a")
	o.Restart("a")
	o.Start("a", 2, 3)
	o.End("a", 1) // the killed process's, reported late
	if o.Crowded() != 0 {
		t.Fatalf("a restarted process's slot beside a killed one's: crowded %d", o.Crowded())
	}
	o.Start("a", 0, 4)
	if o.Crowded() != 1 {
		t.Fatalf("a second slot on one process: crowded %d, want 1", o.Crowded())
	}
	if _, _, first := o.Violations(); first == "" {
		t.Fatal("the crowded start is not named as the first violation")
	}
}

// TestBalancedUnderACap: under a cap of 1, 3 slots over 2 live workers
// are balanced with one each, and over 4 with 3 of them holding one.
func TestBalancedUnderACap(t *testing.T) {
	o := New(3)
	o.LimitPerWorker(1)
	o.Start("a", 0, 1)
	o.Start("b", 2, 1)
	if !o.Balanced([]string{"a", "b"}) {
		t.Fatal("a slot each over 2 workers, one free: not balanced")
	}
	if o.Balanced([]string{"a", "b", "c"}) {
		t.Fatal("a free slot while c waits: balanced")
	}
	o.Start("c", 1, 1)
	if !o.Balanced([]string{"a", "b", "c", "d"}) {
		t.Fatal("3 slots held over 4 workers: not balanced")
	}
}
