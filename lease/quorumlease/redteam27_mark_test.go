package quorumlease_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"

	"github.com/leasehold/leasehold/lease"
)

// TestRedTeam27QuorumHandoffWithNoRoomForTheMark (RT27-3, fixed): a term
// whose annotations leave no room for lease/successor (MaxAnnotations
// keys, the quorum's own included): a single store's ReleaseTo refuses it
// with an *OptionError and writes nothing; the quorum's returned it as
// lease.ErrUnavailable, which a caller retries though nothing will change,
// and now refuses it as the single store does.
func TestRedTeam27QuorumHandoffWithNoRoomForTheMark(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newMemQuorum(3)
		a := open(t, h, "a")
		ta := acquire(t, a)
		full := ta
		for i := 0; ; i++ {
			next := full.Annotate("app/k"+string(rune('a'+i)), "1")
			if next.Annotations.Len() > lease.MaxAnnotations-2 { // quorum/token and quorum/seq are added to it
				break
			}
			full = next
		}
		ta, err := a.Renew(context.Background(), full)
		if err != nil {
			t.Fatalf("Renew with %d annotations: %v", full.Annotations.Len(), err)
		}
		err = a.(lease.Handoffer).ReleaseTo(context.Background(), ta, "b")
		if _, ok := errors.AsType[*lease.OptionError](err); !ok || lease.Retryable(err) {
			t.Errorf("quorum ReleaseTo with no room for %s: %v (retryable: %t), want an *lease.OptionError, not retryable", lease.AnnotationSuccessor, err, lease.Retryable(err))
		}
	})
}
