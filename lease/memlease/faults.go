package memlease

import "time"

// faults are the failures injected into one contender's calls.
type faults struct {
	failNext    int
	loseNext    int
	delay       time.Duration
	partitioned bool
	hung        bool
	reads       int
	writes      int
}

// fault is what happens to one call.
type fault struct {
	hang, fail, loseResponse bool
	delay                    time.Duration
}

// FailNext makes identity's next n calls fail with lease.ErrUnavailable
// before they reach the store.
func (s *Store) FailNext(identity string, n int) {
	s.withFaults(identity, func(f *faults) { f.failNext = n })
}

// LoseResponses makes identity's next n writes reach the store, which
// applies each one whose condition holds, and then report
// lease.ErrUnavailable, as when a response is lost on the way back.
func (s *Store) LoseResponses(identity string, n int) {
	s.withFaults(identity, func(f *faults) { f.loseNext = n })
}

// Delay holds each of identity's requests for d before it reaches the store,
// so the store applies a write d after it was sent.
func (s *Store) Delay(identity string, d time.Duration) {
	s.withFaults(identity, func(f *faults) { f.delay = d })
}

// Partition makes every call of identity fail at once with
// lease.ErrUnavailable, as if its network to the store were down.
func (s *Store) Partition(identity string) {
	s.withFaults(identity, func(f *faults) { f.partitioned = true })
}

// Hang makes every call of identity block until its context ends, as if the
// store had stopped answering.
func (s *Store) Hang(identity string) {
	s.withFaults(identity, func(f *faults) { f.hung = true })
}

// Heal removes every fault set for identity.
func (s *Store) Heal(identity string) {
	s.withFaults(identity, func(f *faults) {
		*f = faults{reads: f.reads, writes: f.writes}
	})
}

// Calls returns how many reads and writes identity has sent to the store,
// including those that faults failed.
func (s *Store) Calls(identity string) (reads, writes int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f := s.faults[identity]; f != nil {
		return f.reads, f.writes
	}
	return 0, 0
}

func (s *Store) withFaults(identity string, change func(*faults)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := s.faults[identity]
	if f == nil {
		f = &faults{}
		s.faults[identity] = f
	}
	change(f)
}

// takeFault counts one call of identity and decides its fate.
func (s *Store) takeFault(identity string, write bool) fault {
	var out fault
	s.withFaults(identity, func(f *faults) {
		if write {
			f.writes++
		} else {
			f.reads++
		}
		out.hang, out.delay = f.hung, f.delay
		switch {
		case f.partitioned:
			out.fail = true
		case f.failNext > 0:
			f.failNext--
			out.fail = true
		case write && f.loseNext > 0:
			f.loseNext--
			out.loseResponse = true
		}
	})
	return out
}
