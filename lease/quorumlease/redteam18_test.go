package quorumlease_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/quorumlease"
)

// TestRedTeam18BreakThatCannotWriteSaysWhy: a Break whose members refuse
// it for good (the record's annotations leave no room for the broken
// mark, lease.Breaker: an *OptionError naming it), or whose writes'
// outcomes are unknown (answers and read-backs lost), wrote nothing it
// knows of: it must say so, not report the holder alive. Break returned a
// *lease.HeldError for both once the record it was left with showed a
// majority still held, so leasehold break said "the lease changed while
// it was being broken: its holder is alive" of a holder gone for a TTL,
// and --force tried three times and blamed the holder's renewals (rules 7
// and 8; red team 18).
func TestRedTeam18BreakThatCannotWriteSaysWhy(t *testing.T) {
	t.Run("annotations full", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ctx := context.Background()
			h := newMemQuorum(3)
			x, op := open(t, h, "x"), open(t, h, "op")
			tx := acquire(t, x)
			// Annotations that fit with the quorum's own two, and not
			// with the broken mark as well.
			room := lease.MaxAnnotationsSize - len("x/big") - len("quorum/token1") - len("quorum/seq2")
			if _, err := x.Renew(ctx, tx.Annotate("x/big", strings.Repeat("b", room-len("lease/broken1")+1))); err != nil {
				t.Fatalf("x's renewal with annotations that fit: %v", err)
			}
			time.Sleep(2 * ttl) // and x is gone
			rec, err := op.Observe(ctx)
			if err != nil || !rec.Held() {
				t.Fatalf("the operator's Observe: %+v, %v; want x's record", rec, err)
			}
			got, err := op.(lease.Breaker).Break(ctx, rec)
			if !errors.Is(err, lease.ErrInvalid) || errors.Is(err, lease.ErrHeld) || !strings.Contains(fmt.Sprint(err), lease.AnnotationBroken) {
				t.Errorf("Break of a record with no room for the broken mark: %+v, %v; want lease.ErrInvalid naming %s, not lease.ErrHeld", got, err, lease.AnnotationBroken)
			}
		})
	})
	t.Run("outcomes unknown", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ctx := context.Background()
			h := newMemQuorum(3)
			x := open(t, h, "x")
			tx := acquire(t, x)
			lost := make([]bool, 3)
			var ms []lease.Lease
			for i, s := range h.stores {
				l, err := s.Open("job", lease.Options{Identity: "op", TTL: ttl})
				if err != nil {
					t.Fatal(err)
				}
				ms = append(ms, lostBreak{l, &lost[i]})
			}
			op, err := quorumlease.New(ms, nil)
			if err != nil {
				t.Fatal(err)
			}
			time.Sleep(2 * ttl) // x is gone
			rec, err := op.Observe(ctx)
			if err != nil || rec.Holder != "x" {
				t.Fatalf("the operator's Observe: %+v, %v; want x's record", rec, err)
			}
			lost[0], lost[1] = true, true
			got, err := op.(lease.Breaker).Break(ctx, rec)
			if !errors.Is(err, lease.ErrUnavailable) || errors.Is(err, lease.ErrHeld) {
				t.Errorf("Break whose writes to members 1 and 2 landed unanswered: %+v, %v; want lease.ErrUnavailable (unknown), not lease.ErrHeld", got, err)
			}
			if _, err := x.Renew(ctx, tx); !errors.Is(err, lease.ErrLost) {
				t.Errorf("x's renewal after the break landed: %v, want lease.ErrLost", err)
			}
		})
	})
}

// lostBreak is a member whose Break, when *lost is set, lands and whose
// answer is then lost, read-back and all.
type lostBreak struct {
	lease.Lease
	lost *bool
}

func (l lostBreak) Wait(r lease.Record) time.Duration { return l.Lease.(lease.Watcher).Wait(r) }

func (l lostBreak) Break(ctx context.Context, rec lease.Record) (lease.Record, error) {
	got, err := l.Lease.(lease.Breaker).Break(ctx, rec)
	if err == nil && *l.lost {
		return lease.Record{}, fmt.Errorf("lostBreak: answer lost: %w", lease.ErrUnavailable)
	}
	return got, err
}

// TestRedTeam18CommaInAMembersPassword: a password may hold a comma
// (RFC 3986 allows it in user info, and lease.RedactURL redacts it in a
// single lease's URL), and one written raw in a quorum URL, rather than
// as %2C, split the member in two at it: each half parsed as a URL with
// nothing to redact, so lease.RedactURL put the password back together
// whole in leasehold's log and lease rows, and Open's error quoted the
// first half of it (rule 8; red team 18).
func TestRedTeam18CommaInAMembersPassword(t *testing.T) {
	for _, u := range []string{
		"quorum:s3://AKIA:pwA,pwB@b/k,s3://b2/k,s3://b3/k",
		"quorum:s3://AKIA:1234,pwB@b/k,s3://b2/k,s3://b3/k",
		"quorum:mem://a,mem://b,s3://b/k?endpoint=http://u:pwA,pwB@h/",
		"quorum:mem://a,s3://b/k?endpoint=http%3A%2F%2Fu%3ApwA,pwB%40h%2F,mem://c",
	} {
		secrets := []string{"pwA", "pwB", "1234"}
		if got := lease.RedactURL(u); containsAny(got, secrets) {
			t.Errorf("RedactURL(%q) = %q: the password is in it", u, got)
		}
		_, err := lease.Open(context.Background(), u, lease.Options{Identity: "w", TTL: ttl})
		if err == nil || containsAny(err.Error(), secrets) {
			t.Errorf("Open(%q): %v, want an error without the password", u, err)
		}
	}
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
