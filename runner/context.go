package runner

import (
	"context"
	"sync"

	"github.com/leasehold/leasehold/lease"
)

// term is the state of one leadership, shared by the task (through its
// context), the renew loop and the health watch.
type term struct {
	mu       sync.Mutex
	current  lease.Term
	progress chan struct{}
}

func newTerm(t lease.Term) *term {
	return &term{current: t, progress: make(chan struct{}, 1)}
}

func (t *term) get() lease.Term {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.current
}

func (t *term) set(lt lease.Term) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.current = lt
}

type termKey struct{}

// Term returns the leader's current term from the context Task was given:
// its fencing token, and the Sent time of the last successful renewal. ok is
// false outside a task's context.
func Term(ctx context.Context) (t lease.Term, ok bool) {
	st, ok := ctx.Value(termKey{}).(*term)
	if !ok {
		return lease.Term{}, false
	}
	return st.get(), true
}

// Progress tells the stall watchdog that the task is still making progress.
// Call it with the context Task was given; elsewhere it does nothing. It
// never blocks.
func Progress(ctx context.Context) {
	if st, ok := ctx.Value(termKey{}).(*term); ok {
		select {
		case st.progress <- struct{}{}:
		default:
		}
	}
}
