package shardtest

// unreadableAssignment: a group whose assignment object becomes one that
// cannot be read (Config.Unreadable: torn as only the store can tear it; by
// default, bytes that are no assignment written over it, as a person
// could) goes on handling changes: its assigner holds the group's lease,
// so it writes a fence over the object and balances again. Two workers
// start and a third joins, which replaces the object Unreadable saw; the
// object is made unreadable; then one worker leaves, and the other two
// must run every shard, balanced, the oracle seeing no shard on two
// workers and no epoch that did not increase.
func unreadableAssignment(e *env) {
	f := newFleet(e, e.cfg.UnreadableShards)
	defer f.stop()
	key := f.group + "/assignment"
	f.start("w1")
	f.start("w2")
	f.settle("start of two workers", 0)
	tear := e.writeGarbage(key)
	if e.cfg.Unreadable != nil {
		tear = e.cfg.Unreadable(e.t, key)
	}
	f.start("w3")
	f.settle("join of w3", f.o.Starts())
	tear()
	e.t.Logf("the assignment object is unreadable; w1 leaves")
	f.leave("w1")
	f.settle("leave of w1 after the assignment was made unreadable", f.o.Starts())
}

// writeGarbage returns a function that writes bytes that are no assignment
// over key, conditionally on the version it holds then.
func (e *env) writeGarbage(key string) func() {
	return func() {
		e.t.Helper()
		_, v, err := e.s.Get(e.t.Context(), key, "")
		if err != nil {
			e.t.Fatalf("Get(%q): %v", key, err)
		}
		e.put(key, []byte("not an assignment"), v)
	}
}
