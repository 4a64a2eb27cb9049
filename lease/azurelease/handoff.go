package azurelease

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	azlease "github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/lease"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
)

// annotationHandoffLease, in a record handed to a successor (ReleaseTo),
// is the Azure lease ID the holder changed its lease to: the successor
// renews the lease under it, so that the lease passes to it without ever
// being free, and no other contender can acquire it in between. Every
// acquisition drops it (writeTerm).
const annotationHandoffLease = "azurelease/handoff-lease"

// handoffLease is the lease of fixed duration Open returns: a blobLease
// that can hand off. An infinite lease cannot (Options.InfiniteLease): the
// LeaseBlob change keeps its infinite duration, so a lease handed to a
// successor that never comes would be held by nobody, for ever.
type handoffLease struct{ *blobLease }

var _ lease.Handoffer = handoffLease{}

// ReleaseTo is lease.Handoffer's. It writes the record naming successor,
// and the lease ID the successor is to take it under, under term t's
// lease; then it changes t's Azure lease to that ID (LeaseBlob change),
// which ends t: t's ID no longer holds the blob. The lease stays held
// throughout, so every other contender waits as for a live holder, and
// Azure ends it a TTL after t's last renewal unless successor renews it.
// A ReleaseTo whose answer was lost is repeated safely: once the change
// has been made, the record it wrote says so.
func (l handoffLease) ReleaseTo(ctx context.Context, t lease.Term, successor string) error {
	if err := driver.CheckTerm(t, l.opts); err != nil {
		return err
	}
	if err := lease.ValidateSuccessor(successor, t.Holder); err != nil {
		return err
	}
	next := newLeaseID()
	rec := termRecord(t, false)
	rec.Annotations = rec.Annotations.With(lease.AnnotationSuccessor, successor).With(annotationHandoffLease, next)
	if err := rec.Annotations.Validate(); err != nil {
		return err
	}
	err := l.setMetadata(ctx, rec, t.Version, nil)
	if err != nil && !errors.Is(err, lease.ErrLost) {
		_, err = driver.ReadBack(ctx, err, rec, l.readRecord)
	}
	if err == nil {
		err = l.call(ctx, func(ctx context.Context) error {
			if _, err := l.leaseClient(t.Version).ChangeLease(ctx, next, nil); err != nil {
				return l.leaseError(ctx, opChange, err)
			}
			return nil
		})
	}
	if errors.Is(err, lease.ErrLost) {
		return l.handedOrLost(ctx, t, successor, err)
	}
	return err
}

// handedOrLost is ReleaseTo's answer once t's lease ID no longer holds
// the blob (cause): nil if an Azure lease holds it and t's record hands
// it to successor (an earlier call, or this one, whose change's answer
// was lost, handed it over), and lease.ErrLost otherwise.
func (l *blobLease) handedOrLost(ctx context.Context, t lease.Term, successor string, cause error) error {
	st, err := l.stat(ctx, false)
	if err != nil {
		return fmt.Errorf("%w; reading the blob back failed: %v", cause, err)
	}
	if st.leased && handedBy(st, t) == successor {
		return nil
	}
	return l.lostTo(st, t, cause)
}

// handedBy is the successor that st's record shows term t handed the lease
// to, or "" if it shows no handoff of t.
func handedBy(st state, t lease.Term) string {
	if st.rec == nil || st.rec.Holder != t.Holder || st.rec.Token != t.Token || st.rec.Released {
		return ""
	}
	return st.rec.Annotations.Get(lease.AnnotationSuccessor)
}

// takeHanded takes over the lease that st shows handed to this contender,
// under the lease ID the record names: a renewal under that ID, on
// condition that the blob is as st read it, then the record of the new
// term, written as after an acquisition. ok is false when the ID does not
// hold the blob (the holder's change did not land, or the lease lapsed and
// another contender took it): the lease is then waited for as any other.
// A record write that fails leaves the lease held under the handed ID, not
// given back: it stays handed to this contender, whose next Acquire takes
// it, and no third contender slips in; and another caller of this Lease
// may hold a term under that same ID, which a release would end.
func (l *blobLease) takeHanded(ctx context.Context, st state) (t lease.Term, ok bool, err error) {
	id := st.rec.Annotations.Get(annotationHandoffLease)
	if id == "" {
		return lease.Term{}, false, nil
	}
	sent := time.Now()
	err = l.call(ctx, func(ctx context.Context) error {
		_, err := l.leaseClient(id).RenewLease(ctx, &azlease.BlobRenewOptions{
			ModifiedAccessConditions: &azlease.ModifiedAccessConditions{IfMatch: &st.etag},
		})
		switch {
		case err == nil:
			return nil
		case bloberror.HasCode(err, bloberror.ConditionNotMet):
			return errChanged
		}
		return l.leaseError(ctx, opRenew, err)
	})
	switch {
	case errors.Is(err, lease.ErrLost):
		return lease.Term{}, false, nil
	case err != nil:
		return lease.Term{}, true, err
	}
	t, err = l.writeTerm(ctx, st, id, sent)
	return t, true, err
}
