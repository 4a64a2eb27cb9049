package azurelease

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	azlease "github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/lease"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
)

// blobLease is the lease.Lease on one blob.
type blobLease struct {
	opts      lease.Options
	blob      *blockblob.Client
	container string
	where     string // the blob's URL, for messages
	duration  int32  // the Azure lease duration: TTL seconds, or -1
	// credentials says where the client's credentials come from.
	credentials credentialSource

	mu sync.Mutex
	// seen is the blob's ETag as this Lease last read it, and seenAt when
	// the first read that returned it returned: the write that gave the
	// blob that ETag was applied before then.
	seen   azcore.ETag
	seenAt time.Time

	// highest is the highest token this Lease has read or tried to write:
	// it never writes a token at or below it, even on a blob created anew.
	highest driver.Highest
}

var _ lease.Breaker = (*blobLease)(nil)

func (l *blobLease) Options() lease.Options { return l.opts }

// Judge is lease.JudgedByStore: Azure ends a lease a TTL after the latest
// acquire or renewal it received.
func (l *blobLease) Judge() lease.Judge { return lease.JudgedByStore }

// RenewalsShow is lease.RenewalShower's: true, as Renew writes the record
// under the lease after each renewal, which changes the blob's ETag.
func (l *blobLease) RenewalsShow() bool { return true }

// FollowerReads is lease.FollowerReader's: Description.FollowerReads.
func (l *blobLease) FollowerReads() int { return Description.FollowerReads }

// call runs one request under CallTimeout, with the SDK's retries off.
func (l *blobLease) call(ctx context.Context, f func(context.Context) error) error {
	return driver.Call(ctx, l.opts.CallTimeout, func(ctx context.Context) error {
		return f(policy.WithRetryOptions(ctx, noRetries))
	})
}

func (l *blobLease) leaseClient(id string) *azlease.BlobClient {
	c, err := azlease.NewBlobClient(l.blob, &azlease.BlobClientOptions{LeaseID: &id})
	if err != nil {
		// NewBlobClient fails only for a nil ID it cannot generate.
		panic("azurelease: lease.NewBlobClient: " + err.Error())
	}
	return c
}

// state is the blob as one GetBlobProperties saw it.
type state struct {
	rec      *lease.Record // the metadata's record; nil if the blob has no metadata
	etag     azcore.ETag
	leased   bool // an Azure lease holds the blob (leased, or breaking)
	infinite bool // that lease is infinite
	broken   bool // the blob's lease was broken (not released, nor expired)
	// seenAt is when the first of this Lease's reads that returned etag
	// returned.
	seenAt time.Time
}

// record is the metadata's record, or the zero Record if there is none.
func (st state) record() lease.Record {
	if st.rec == nil {
		return lease.Record{}
	}
	return *st.rec
}

// stat reads the blob's properties and metadata. A missing blob is an
// error wrapping lease.ErrNoRecord, unless create is set: then stat creates
// the blob, empty, if it is still absent, and reads it again.
func (l *blobLease) stat(ctx context.Context, create bool) (state, error) {
	var p blob.GetPropertiesResponse
	err := l.call(ctx, func(ctx context.Context) (err error) {
		if p, err = l.blob.GetProperties(ctx, nil); err != nil {
			return l.classify(ctx, opGetProperties, err)
		}
		return nil
	})
	if create && errors.Is(err, lease.ErrNoRecord) {
		if err := l.create(ctx); err != nil {
			return state{}, err
		}
		st, err := l.stat(ctx, false)
		if errors.Is(err, lease.ErrNoRecord) { // deleted at once by someone
			return state{}, fmt.Errorf("%w: azurelease: %s vanished as soon as it was created: %v", lease.ErrUnavailable, l.where, err)
		}
		return st, err
	}
	if err != nil {
		return state{}, err
	}
	if p.ETag == nil {
		return state{}, fmt.Errorf("%w: azurelease: %s %s returned no ETag", lease.ErrUnavailable, opGetProperties, l.where)
	}
	st := state{etag: *p.ETag, seenAt: l.sighted(*p.ETag, time.Now())}
	if p.LeaseState != nil {
		st.leased = *p.LeaseState == azlease.StateTypeLeased || *p.LeaseState == azlease.StateTypeBreaking
		st.broken = *p.LeaseState == azlease.StateTypeBroken
	}
	st.infinite = st.leased && p.LeaseDuration != nil && *p.LeaseDuration == azlease.DurationTypeInfinite
	if p.ContentLength != nil && *p.ContentLength > 0 {
		return state{}, fmt.Errorf("%w (%s)", driver.Corruptf("the blob holds %d bytes; a leasehold lease blob is empty and keeps its record in metadata", *p.ContentLength), l.where)
	}
	if st.rec, err = decodeMetadata(p.Metadata); err != nil {
		return state{}, fmt.Errorf("%w (%s)", err, l.where)
	}
	if st.rec != nil {
		st.rec.Version = string(st.etag)
		l.highest.Note(st.rec.Token)
	}
	return st, nil
}

// sighted notes that a read that returned at back found the blob at etag,
// and returns when the first read that found it there returned.
func (l *blobLease) sighted(etag azcore.ETag, back time.Time) time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	if etag != l.seen || l.seenAt.IsZero() {
		l.seen, l.seenAt = etag, back
	}
	return l.seenAt
}

// create stores the blob, empty and without metadata, unless it exists.
func (l *blobLease) create(ctx context.Context) error {
	return l.call(ctx, func(ctx context.Context) error {
		_, err := l.blob.Upload(ctx, streaming.NopCloser(strings.NewReader("")), &blockblob.UploadOptions{
			AccessConditions: &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfNoneMatch: new(azcore.ETagAny)}},
		})
		if err == nil || bloberror.HasCode(err, bloberror.BlobAlreadyExists, bloberror.ConditionNotMet, bloberror.LeaseIDMissing) {
			return nil // it exists: another contender created it
		}
		return l.classify(ctx, opCreate, err)
	})
}

// view is the lease.Record that st shows. A blob that an Azure lease holds
// while its metadata names no current holder (a contender between its
// acquire and its metadata write, or a tool other than leasehold) has an
// unknown holder: Holder is empty, Token 0, Released false, and TTL the
// longest the lease may still last, since Azure does not say how much is
// left: MaxTTL for a lease of fixed duration, 0 for an infinite one.
func (l *blobLease) view(st state) (lease.Record, error) {
	switch {
	case st.leased && st.rec != nil && !st.rec.Released:
		// The lease ID a handoff names is for its successor alone.
		r := *st.rec
		r.Annotations = r.Annotations.With(annotationHandoffLease, "")
		return r, nil
	case st.leased && st.infinite:
		return lease.Record{Version: string(st.etag)}, nil
	case st.leased:
		return lease.Record{TTL: MaxTTL, Version: string(st.etag)}, nil
	case st.rec == nil:
		return lease.Record{}, fmt.Errorf("%w: azurelease: %s has never been acquired", lease.ErrNoRecord, l.where)
	}
	r := *st.rec
	r.Released = true // no Azure lease holds it: free, whatever the metadata says
	return r, nil
}

func (l *blobLease) Observe(ctx context.Context) (lease.Record, error) {
	st, err := l.stat(ctx, false)
	if err != nil {
		return lease.Record{}, err
	}
	return l.view(st)
}

// heldError reports the lease that st shows held by someone else.
func (l *blobLease) heldError(st state) error {
	r, err := l.view(st)
	if err != nil { // not held after all: a race with a release
		r = lease.Record{TTL: l.opts.TTL, Version: string(st.etag)}
	}
	held := &lease.HeldError{Record: r, Wait: r.TTL}
	switch {
	case held.Wait == 0: // an infinite lease of an unknown holder: poll as for a live one
		held.Wait = l.opts.TTL
	case r.Holder != "" && !st.infinite:
		held.Wait = lapseWait(time.Until(st.seenAt.Add(r.TTL)), r.TTL)
	}
	switch {
	case st.infinite && r.Holder == "":
		return fmt.Errorf("azurelease: %s has an infinite Azure lease whose holder did not write its name: another tool, or a person, holds it, and it never lapses; break it (az storage blob lease break) to let contenders in: %w", l.where, held)
	case r.Holder == "":
		return fmt.Errorf("azurelease: %s is leased by a holder that has not written its name yet (a contender acquiring it, or another tool): %w", l.where, held)
	case st.infinite && l.duration != -1:
		return fmt.Errorf("azurelease: %s: %w under an infinite Azure lease, which never lapses (was it opened with InfiniteLease?)", l.where, held)
	}
	return held
}

// lapseWait is how long a follower waits before trying again to acquire a
// lease held by a holder whose Azure lease lasts ttl, when left is how long
// until a TTL has passed since this Lease first saw the blob as it is: the
// holder writes the blob after each renewal (Renew), so its latest renewal
// reached Azure before then, and Azure ends its lease by then, on a clock
// that ticks at the rate of this one. Until then it waits for that moment;
// for a tenth of the TTL after it, it tries again every fiftieth (the
// lease can lapse a little late, as clock rates and latency vary); after
// that it waits a TTL, as for a holder whose renewals do not show (a
// version of leasehold before they did), and the runner's own schedule
// decides. However early it tries, Azure refuses a lease that has not
// lapsed: the wait decides only how soon a follower finds it free.
func lapseWait(left, ttl time.Duration) time.Duration {
	switch {
	case left > 0:
		return left
	case left > -ttl/10:
		return ttl / 50
	}
	return ttl
}

func (l *blobLease) Acquire(ctx context.Context) (lease.Term, error) {
	// Another round only when the blob changed between this contender's
	// read and its acquire (another contender acquired and released it in
	// between).
	var err error
	for range 3 {
		var st state
		if st, err = l.stat(ctx, true); err != nil {
			return lease.Term{}, err
		}
		if _, err := l.highest.Next(st.record()); err != nil {
			return lease.Term{}, fmt.Errorf("%w (%s)", err, l.where)
		}
		if st.leased && st.record().Successor() == l.opts.Identity {
			t, ok, err := l.takeHanded(ctx, st)
			switch {
			case errors.Is(err, errChanged):
				continue
			case ok:
				return t, err
			}
		}
		if st.leased { // by someone, or by a term of this Lease's: both are live
			return lease.Term{}, l.heldError(st)
		}
		t, err := l.acquireFree(ctx, st)
		if !errors.Is(err, errChanged) {
			return t, err
		}
	}
	return lease.Term{}, fmt.Errorf("%w: azurelease: %s changed under every attempt to acquire it: %w", lease.ErrUnavailable, l.where, err)
}

// errChanged: the blob changed between the read and the acquire.
var errChanged = errors.New("the blob changed since it was read")

// acquireFree takes the lease on a blob that st shows free, conditional on
// the blob being unchanged since st was read, and writes the record with
// the next token under the new lease.
func (l *blobLease) acquireFree(ctx context.Context, st state) (lease.Term, error) {
	id := newLeaseID()
	sent := time.Now()
	err := l.call(ctx, func(ctx context.Context) error {
		_, err := l.leaseClient(id).AcquireLease(ctx, l.duration, &azlease.BlobAcquireOptions{
			ModifiedAccessConditions: &azlease.ModifiedAccessConditions{IfMatch: &st.etag},
		})
		switch {
		case err == nil:
			return nil
		case bloberror.HasCode(err, heldCodes...):
			return fmt.Errorf("%w: %w", errHeldNow, err)
		case bloberror.HasCode(err, bloberror.ConditionNotMet):
			return errChanged
		}
		return l.classify(ctx, opAcquire, err)
	})
	switch {
	case errors.Is(err, errHeldNow):
		// Someone else won the race, if a read says the blob is leased now:
		// tell who. Otherwise the lease is lapsing.
		now, rerr := l.stat(ctx, false)
		if rerr == nil && now.leased {
			return lease.Term{}, l.heldError(now)
		}
		return lease.Term{}, l.lapsing(err, rerr)
	case errors.Is(err, errChanged):
		return lease.Term{}, err
	case err != nil:
		if !isDefinite(err) {
			// The lease may have been taken with id: give it back.
			l.abandon(ctx, id)
		}
		return lease.Term{}, err
	}
	t, err := l.writeTerm(ctx, st, id, sent)
	if err != nil {
		// Never reported: give the new lease back, so that it does not keep
		// others waiting for its TTL.
		l.abandon(ctx, id)
	}
	return t, err
}

// errHeldNow: the acquire found the blob leased.
var errHeldNow = errors.New("Azure refused the acquire as leased")

// lapsing reports an acquire refused as leased (err) of a blob whose lease
// state, read before the acquire, said no lease held it; rerr is the error
// of the read after the refusal, if it failed. When a lease expires without
// being released, Azure may refuse new acquires for up to a minute while
// the blob's properties already read expired or available: no holder
// exists, and nobody can acquire the lease until Azure lets it go. That is
// lease.ErrUnavailable, to retry, never a lease held by someone.
func (l *blobLease) lapsing(err, rerr error) error {
	if rerr != nil {
		return fmt.Errorf("%w: azurelease: %s: the acquire was refused as leased although the blob read as not leased, and reading it again failed (%v); the previous lease is probably lapsing: %w", lease.ErrUnavailable, l.where, rerr, err)
	}
	return fmt.Errorf("%w: azurelease: %s: the previous lease is lapsing: the blob reads as not leased, but Azure still refuses to acquire it, as it may for up to a minute after a lease expired without a release: %w", lease.ErrUnavailable, l.where, err)
}

// writeTerm writes the record of a new term under lease id, on the blob as
// st read it, and returns the term. If the write fails and a read does not
// show it landed, it returns the error: the acquisition is reported only
// once its token is stored. Whether to give lease id back is the caller's
// call: a lease ID that a handoff named may hold another caller's term.
func (l *blobLease) writeTerm(ctx context.Context, st state, id string, sent time.Time) (lease.Term, error) {
	prev := st.record()
	token, err := l.highest.Next(prev)
	t := lease.Term{Holder: l.opts.Identity, Token: token, TTL: l.opts.TTL, Sent: sent, Version: id, Annotations: brokenMark(driver.CarriedOver(prev.Annotations), st.broken).With(annotationHandoffLease, "")}
	if err == nil {
		l.highest.Note(token)
		rec := termRecord(t, false)
		rec.Annotations = t.Annotations
		if err = l.setMetadata(ctx, rec, id, &st.etag); err != nil {
			_, err = driver.ReadBack(ctx, err, rec, l.readRecord)
		}
	}
	if err != nil {
		return lease.Term{}, l.notLost(err)
	}
	return t, nil
}

// brokenMark returns a with lease.AnnotationBroken set if broken, and
// removed if not: a native break writes no metadata, so the acquisition
// that follows one marks the record it writes, and the mark a record
// carries describes how its holder took it, not how its lease ended.
func brokenMark(a lease.Annotations, broken bool) lease.Annotations {
	if broken {
		return a.With(lease.AnnotationBroken, "1")
	}
	return a.With(lease.AnnotationBroken, "")
}

// termRecord is the record of term t, with a fresh nonce.
func termRecord(t lease.Term, released bool) lease.Record {
	r := t.Record()
	r.Released, r.Nonce = released, driver.NewNonce()
	return r
}

// readRecord reads the record in the blob's metadata, as a write left it;
// a blob without one is lease.ErrNoRecord.
func (l *blobLease) readRecord(ctx context.Context) (lease.Record, error) {
	st, err := l.stat(ctx, false)
	if err == nil && st.rec == nil {
		err = fmt.Errorf("%w: azurelease: %s has no record", lease.ErrNoRecord, l.where)
	}
	if err != nil {
		return lease.Record{}, err
	}
	return *st.rec, nil
}

// setMetadata writes rec as the blob's metadata under lease id, and, if
// ifMatch is not nil, only if the blob's ETag is *ifMatch.
func (l *blobLease) setMetadata(ctx context.Context, rec lease.Record, id string, ifMatch *azcore.ETag) error {
	return l.call(ctx, func(ctx context.Context) error {
		cond := &blob.AccessConditions{LeaseAccessConditions: &blob.LeaseAccessConditions{LeaseID: &id}}
		if ifMatch != nil {
			cond.ModifiedAccessConditions = &blob.ModifiedAccessConditions{IfMatch: ifMatch}
		}
		_, err := l.blob.SetMetadata(ctx, encodeMetadata(rec), &blob.SetMetadataOptions{AccessConditions: cond})
		if err != nil {
			return l.leaseError(ctx, opSetMetadata, err)
		}
		return nil
	})
}

// leaseError classifies err from a request made under a lease ID: the
// codes saying the ID no longer holds the blob are lease.ErrLost.
func (l *blobLease) leaseError(ctx context.Context, o op, err error) error {
	if ctx.Err() == nil && bloberror.HasCode(err, lostCodes...) {
		return fmt.Errorf("%w: azurelease: %s %s: %w", lease.ErrLost, o, l.where, err)
	}
	if ctx.Err() == nil && bloberror.HasCode(err, bloberror.BlobNotFound) {
		return fmt.Errorf("%w: azurelease: %s %s: the blob was deleted: %w", lease.ErrLost, o, l.where, err)
	}
	return l.classify(ctx, o, err)
}

// notLost turns lease.ErrLost, which Acquire never returns, into
// lease.ErrUnavailable: a lease taken moments ago was lost (broken by
// someone) before its record was written, so the attempt failed.
func (l *blobLease) notLost(err error) error {
	if !errors.Is(err, lease.ErrLost) {
		return err
	}
	return fmt.Errorf("%w: azurelease: %s: the new Azure lease was lost before its record was written: %v", lease.ErrUnavailable, l.where, err)
}

// isDefinite reports whether err is an answer that the request was not
// carried out, rather than an unknown outcome.
func isDefinite(err error) bool {
	var re *azcore.ResponseError
	return errors.As(err, &re) && re.StatusCode >= 400 && re.StatusCode < 500 && re.StatusCode != 408 && re.StatusCode != 429
}

// abandon releases lease id, best effort, with a context of its own (ctx
// may have ended), so that a term that was never reported does not keep
// others waiting for its TTL.
func (l *blobLease) abandon(ctx context.Context, id string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.opts.CallTimeout)
	defer cancel()
	_, _ = l.leaseClient(id).ReleaseLease(policy.WithRetryOptions(ctx, noRetries), nil)
}

func (l *blobLease) Renew(ctx context.Context, t lease.Term) (lease.Term, error) {
	if err := driver.CheckTerm(t, l.opts); err != nil {
		return lease.Term{}, err
	}
	sent := time.Now()
	err := l.call(ctx, func(ctx context.Context) error {
		if _, err := l.leaseClient(t.Version).RenewLease(ctx, nil); err != nil {
			return l.leaseError(ctx, opRenew, err)
		}
		return nil
	})
	if err != nil {
		if errors.Is(err, lease.ErrLost) {
			return lease.Term{}, fmt.Errorf("%w (token %d)", err, t.Token)
		}
		return lease.Term{}, err
	}
	t.Sent = sent
	if err := l.show(ctx, t); err != nil {
		return lease.Term{}, err
	}
	return t, nil
}

// show writes term t's record (its annotations, and a fresh nonce) under
// its lease, after t's renewal: the write changes the blob's ETag, so that
// followers see the renewal and know that the lease it renewed lapses
// within a TTL of their seeing it (lapseWait). A write whose answer is an
// error is read back, as every write is; an error that remains leaves the
// outcome undecided, as for a renewal.
func (l *blobLease) show(ctx context.Context, t lease.Term) error {
	rec := termRecord(t, false)
	err := l.setMetadata(ctx, rec, t.Version, nil)
	if err != nil && !errors.Is(err, lease.ErrLost) {
		_, err = driver.ReadBack(ctx, err, rec, l.readRecord)
	}
	if errors.Is(err, lease.ErrLost) {
		return fmt.Errorf("%w (token %d)", err, t.Token)
	}
	return err
}

func (l *blobLease) Release(ctx context.Context, t lease.Term) error {
	if err := driver.CheckTerm(t, l.opts); err != nil {
		return err
	}
	err := l.setMetadata(ctx, termRecord(t, true), t.Version, nil)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		// Lost, or an unknown outcome: the record decides.
		st, rerr := l.stat(ctx, false)
		switch {
		case rerr != nil && !errors.Is(rerr, lease.ErrNoRecord):
			if errors.Is(err, lease.ErrUnavailable) {
				return fmt.Errorf("%w; reading the blob back failed too: %v", err, rerr)
			}
			return fmt.Errorf("%w: azurelease: release of token %d: %v; reading the blob back failed: %v", lease.ErrUnavailable, t.Token, err, rerr)
		case rerr != nil || st.rec == nil || st.rec.Holder != t.Holder || st.rec.Token != t.Token:
			return l.lostTo(st, t, err)
		case handedBy(st, t) != "":
			// Handed over by ReleaseTo: the handoff stays in place.
			return nil
		case st.rec.Released && !st.leased:
			// Released by this term, and no Azure lease holds the blob.
			return nil
		case st.rec.Released:
			// Released by this term (by this call, whose response was lost,
			// or by an earlier one), and the Azure lease may still be ours:
			// release it below.
		case !errors.Is(err, lease.ErrLost):
			return err // the outcome is unknown, and the record not released
		case !st.leased:
			// The term lapsed and nobody has taken the lease since: it is
			// free, which is what Release is for.
			return nil
		default:
			return l.lostTo(st, t, err)
		}
	}
	err = l.call(ctx, func(ctx context.Context) error {
		if _, err := l.leaseClient(t.Version).ReleaseLease(ctx, nil); err != nil {
			return l.leaseError(ctx, opRelease, err)
		}
		return nil
	})
	if err == nil || errors.Is(err, lease.ErrLost) {
		// The record says released; the Azure lease is gone either way.
		return nil
	}
	return fmt.Errorf("%w: azurelease: the record of token %d says released, but the Azure lease is held until it lapses: %w", lease.ErrUnavailable, t.Token, err)
}

// Break is lease.Breaker's: it breaks the blob's Azure lease at once
// (break period 0), on condition that the blob is still at rec's Version:
// every write of the record changes the blob's ETag, a new acquisition's
// and each renewal's. The metadata and its token stay as they are: a blob that no
// Azure lease holds reads as released, and the next Acquire writes the
// token plus one. Whatever the answer, the blob read afterwards decides
// the outcome.
func (l *blobLease) Break(ctx context.Context, rec lease.Record) (lease.Record, error) {
	if needed, err := driver.BreakNeeded(rec); err != nil || !needed {
		return rec, err
	}
	etag := azcore.ETag(rec.Version)
	zero := int32(0)
	err := l.call(ctx, func(ctx context.Context) error {
		_, err := l.leaseClient(newLeaseID()).BreakLease(ctx, &azlease.BlobBreakOptions{
			BreakPeriod:              &zero,
			ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfMatch: &etag},
		})
		if err != nil && !bloberror.HasCode(err, bloberror.ConditionNotMet, bloberror.LeaseNotPresentWithLeaseOperation) {
			return l.classify(ctx, opBreak, err)
		}
		return nil // broken, or changed since rec: the blob says which
	})
	if err != nil && ctx.Err() != nil {
		return lease.Record{}, ctx.Err()
	}
	st, rerr := l.stat(ctx, false)
	switch {
	case rerr != nil && err != nil:
		return lease.Record{}, fmt.Errorf("%w; reading the blob back failed too: %v", err, rerr)
	case rerr != nil:
		return lease.Record{}, rerr
	case !st.leased && st.rec == nil:
		// Broken (or released meanwhile) on a blob that no leasehold term
		// ever wrote: free, with no token yet.
		return lease.Record{Released: true, Version: string(st.etag)}, nil
	case !st.leased:
		return l.view(st)
	case err != nil && string(st.etag) == rec.Version:
		return lease.Record{}, err // still leased as rec showed: not broken
	}
	return lease.Record{}, l.heldError(st)
}

// lostTo returns lease.ErrLost for term t, which st shows ended.
func (l *blobLease) lostTo(st state, t lease.Term, cause error) error {
	r, err := l.view(st)
	if err != nil {
		return fmt.Errorf("%w: azurelease: %s: token %d ended: %w", lease.ErrLost, l.where, t.Token, cause)
	}
	return fmt.Errorf("azurelease: %s: token %d ended: %w", l.where, t.Token, driver.LostTo(r))
}

// newLeaseID returns a random (version 4) UUID, the form Azure lease IDs
// take.
func newLeaseID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}
