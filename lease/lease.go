package lease

import (
	"context"
	"strconv"
	"time"
)

// Lease is one contender's handle on one lease. A Lease is opened for a
// single identity (Options.Identity) and is safe for concurrent use, though
// a contender normally calls it from one loop: Acquire until it wins, then
// Renew until it stops, then Release.
//
// Every method returns an error that wraps one of this package's sentinel
// errors (ErrHeld, ErrLost, ErrCorrupt, ErrUnavailable, ErrNotFound,
// ErrPermission, ErrInvalid, ErrUnsafeStore), or the context's own error, unwrapped, when ctx
// ends first. An operation that ends with an error other than ErrHeld and
// ErrLost may or may not have reached the store; the implementation resolves
// such unknown outcomes by reading the record, never by guessing.
type Lease interface {
	// Acquire makes one attempt to take the lease for this contender.
	//
	// It returns a Term when the lease was free (never held, or released) and
	// this contender wrote itself in as holder, or when the current holder's
	// term has lapsed. Who judges the lapse depends on the store:
	//
	//   - On a compare-and-swap store (Judge returns JudgedByContender),
	//     this contender does: the
	//     holder's record must have stayed unchanged for that holder's full
	//     TTL as measured on this contender's own monotonic clock from the
	//     moment the first of an unbroken run of its reads returned that
	//     version. A run is broken by a read that fails, by a read that
	//     returns more than the holder's RenewInterval after the previous
	//     one was sent (the holder could have written, and a restore hidden
	//     the write, in between), and by a record whose token is lower than
	//     one this Lease has seen (a restore). A record that vanished after
	//     this Lease saw one counts as a change too: it is created anew only
	//     after staying absent for the last record's TTL. A contender that
	//     has not watched the record for a TTL cannot take it over, however
	//     old the record is, so a new contender's first Acquire of a held
	//     lease always fails; the package driver's documentation gives the
	//     argument.
	//   - On a store with native leases (Azure Blob; Judge returns
	//     JudgedByStore), the store does, on its
	//     own clock: the holder's lease lapses a TTL after the store received
	//     its latest acquire or renewal, so a contender's first Acquire may
	//     take over a lease that lapsed before the contender started.
	//
	// Either way the lapse comes no earlier than a TTL after the holder sent
	// its latest successful acquire or renewal (Term.Sent), assuming clocks
	// tick at nearly the same rate, so a holder that stops acting as leader
	// before Term.Expires is never deposed while it still acts.
	//
	// It returns an error for which errors.Is(err, ErrHeld) is true, and
	// errors.As yields a *HeldError naming the holder, when someone else
	// holds the lease. That includes this contender's own identity, and
	// this Lease's own terms: a term that Acquire or Renew returned, or a
	// record Keep left held, is someone's (two Runners on one Lease, a
	// scheduled run that overlaps the previous one) and must lapse before
	// this Lease takes it over. The one exception is a record that this
	// Lease's latest Acquire wrote although it reported failure (its answer
	// was lost), read back within that record's TTL of sending it, before
	// any other record was seen: nobody acts on it, and it is replaced at
	// once with a new token.
	// When the store shows the lease held but not by whom (a native lease
	// taken by another tool, or by a contender that has not yet written its
	// name), the HeldError's Record has an empty Holder and Token 0. A
	// native lease that the store still refuses although it shows it
	// expired (Azure may, for up to a minute) has no holder: that is
	// ErrUnavailable, to retry.
	//
	// It returns ErrCorrupt when the object at the lease's key is not a
	// lease record; such an object is never taken over.
	//
	// The token it writes is greater than every token this Lease has read
	// or written, even when the record was deleted and is created anew; a
	// Lease opened after the delete knows only what it reads.
	//
	// It returns ErrUnsafeStore, before writing anything to the record,
	// when the store was checked and does not keep the contract (on S3:
	// it accepts PutObject with If-None-Match or If-Match and ignores the
	// condition). Backends that check their store do so before this
	// process's first write to it.
	Acquire(ctx context.Context) (Term, error)

	// Renew extends the term t, which must come from this Lease's Acquire or
	// Renew. The returned Term replaces t: its Sent is when the renewal was
	// sent, and the holder's deadlines count from it. It writes t's
	// Annotations into the record (on a native lease, with a second
	// request, and only when they differ from what this term last wrote).
	// It returns ErrInvalid, writing nothing, when Annotations.Validate
	// refuses them (Annotations.Validate).
	//
	// It returns ErrLost when the record no longer names this holder with
	// t's token, or is gone (deleted by a lifecycle rule or a person), or,
	// on a native lease, the store no longer holds the lease for t (it was
	// broken): the lease was taken over, released or deleted, and the
	// caller must stop acting as leader at once. Any other error leaves the
	// outcome undecided: the caller may retry with t until its deadline
	// passes.
	Renew(ctx context.Context, t Term) (Term, error)

	// Release gives the lease up, keeping its fencing counter and writing
	// t's Annotations, so that the
	// next contender may acquire it at once with a greater token. It returns
	// nil when the record was released by this call (also when the term had
	// lapsed but nobody has taken the lease since) or already was released
	// by this term, ErrLost when the term had already ended (the lease was
	// taken over), and another error when the outcome is unknown; the lease
	// then lapses after its TTL.
	Release(ctx context.Context, t Term) error

	// Observe reads the current record without changing it. It returns an
	// error wrapping ErrNoRecord when the lease has never been acquired. A
	// lease the store shows held but not by whom (see Acquire) reads with
	// an empty Holder, Token 0 and Released false. On
	// CAS stores each read also counts towards this contender's judgement of
	// expiry, as Acquire's reads do.
	Observe(ctx context.Context) (Record, error)

	// Options returns the options the lease was opened with, defaults filled
	// in.
	Options() Options

	// Judge says who decides that a holder's term has lapsed: this
	// contender, on its own clock (compare-and-swap stores), or the store
	// (native leases). It never changes and sends no request.
	Judge() Judge
}

// Judge names who decides that a holder's term has lapsed (see
// Lease.Acquire). Code that waits on a held lease reads it instead of
// guessing from a URL scheme or a HeldError's Wait.
type Judge int

const (
	// JudgedByContender: a compare-and-swap store (S3, DynamoDB, Cloud
	// Storage, memory).
	// Every write, renewals included, changes the record's Version; a
	// contender takes a held lease over only after seeing the same
	// Version for the holder's TTL on its own monotonic clock, so a
	// HeldError's Wait shrinks while the record stays unchanged.
	JudgedByContender Judge = iota + 1
	// JudgedByStore: a store with native leases (Azure Blob). The store
	// ends a holder's lease a TTL after its latest renewal, which need not
	// change the Version (see RenewalShower); a lapsed lease reads as
	// Released, and as long as the store refuses an Acquire the holder's
	// lease is live.
	JudgedByStore
)

// String names who judges expiry, for logs and messages.
func (j Judge) String() string {
	switch j {
	case JudgedByContender:
		return "contender"
	case JudgedByStore:
		return "store"
	}
	return "Judge(" + strconv.Itoa(int(j)) + ")"
}

// RenewalShower is implemented by a Lease on a store that judges expiry
// itself (JudgedByStore) whose holder all the same changes the record's
// Version with every renewal (Azure Blob: a metadata write under the
// lease after each renewal of it). A follower can then learn when the
// holder renews and read just after each renewal, as on a compare-and-swap
// store; the store still judges, and a follower takes the lease only when
// the store grants it. Check with RenewalsShow.
type RenewalShower interface {
	// RenewalsShow reports whether every renewal of the lease's holder
	// changes the record's Version. It never changes and sends no
	// request.
	RenewalsShow() bool
}

// RenewalsShow reports whether every renewal of l's holder changes the
// record's Version, so that a follower can read just after the holder's
// renewals: on every compare-and-swap store (JudgedByContender), and on a
// native lease that implements RenewalShower and says so.
func RenewalsShow(l Lease) bool {
	if l.Judge() == JudgedByContender {
		return true
	}
	s, ok := l.(RenewalShower)
	return ok && s.RenewalsShow()
}

// FollowerReader is implemented by a Lease whose store asks a follower to
// read it more often per renewal than the runner's default
// (runner.DefaultFollowerReads), once it has learned when the holder
// renews: Azure Blob, whose TTL cannot be shortened below 15s, so that
// only more reads make a handover (a release seen by the next follower to
// read) quicker, as a shorter TTL does on the compare-and-swap stores. A
// backend's method returns its driver.Store's FollowerReads. Check with
// FollowerReads.
type FollowerReader interface {
	// FollowerReads is how many times per renewal of its holder a
	// follower reads the lease; 0 for the runner's default. It never
	// changes and sends no request.
	FollowerReads() int
}

// FollowerReads returns how many times per renewal of its holder a
// follower reads l, as l's FollowerReader says; 0, for the runner's
// default, when l does not say.
func FollowerReads(l Lease) int {
	if r, ok := l.(FollowerReader); ok {
		return r.FollowerReads()
	}
	return 0
}

// Record is a lease's state as stored.
type Record struct {
	// Holder is the identity of the contender that last acquired the lease.
	Holder string
	// Token is the fencing token of the latest acquisition. Tokens start at
	// 1 and every acquisition's token is greater than all earlier ones.
	Token uint64
	// TTL is the holder's time to live: how long a contender must see the
	// record unchanged before it may take the lease over.
	TTL time.Duration
	// Released reports whether the holder gave the lease up. On a native
	// lease it is also true once the holder's lease lapsed, as the store
	// then holds it for no one.
	Released bool
	// Nonce is fresh random text written with every write, so that every
	// write changes the stored bytes and therefore the version, even on
	// stores whose version is a digest of the content.
	Nonce string
	// Annotations are the state that layers above this package keep in
	// the record (see Annotations). Every write carries them over from the
	// record it follows, so they survive takeovers, renewals, releases and
	// breaks; only a holder changes them, by renewing (or releasing) a Term
	// whose Annotations it changed.
	Annotations Annotations
	// RenewInterval is how often the holder renews (Options.RenewInterval
	// of the Lease that wrote the record), or 0 in a record written by a
	// version of leasehold that did not store it. A contender judging
	// expiry counts a version unchanged only over reads that follow each
	// other within it (see Acquire).
	RenewInterval time.Duration
	// Version is the store's opaque version of the record (an ETag, a record
	// version number); it changes with every write. It is not stored inside
	// the record.
	Version string
}

// Held reports whether the record names a holder that has not released it.
func (r Record) Held() bool { return r.Holder != "" && !r.Released }

// Successor is the identity of the contender the record's holder handed
// the lease to (Handoffer's ReleaseTo, AnnotationSuccessor), or "" when
// the record is not held or names none.
func (r Record) Successor() string {
	if !r.Held() {
		return ""
	}
	return r.Annotations.Get(AnnotationSuccessor)
}

// HolderRenewInterval is how often the record's holder renews, as far as a
// contender can know: RenewInterval, or for a record of a version that did
// not store it, the default for its TTL (DefaultRenewInterval); 0 for a
// record with neither. It is the longest gap between two reads that counts
// towards the record's expiry (see Acquire).
func (r Record) HolderRenewInterval() time.Duration {
	if r.RenewInterval > 0 {
		return r.RenewInterval
	}
	return DefaultRenewInterval(r.TTL)
}

// Term is a holder's tenure as this contender knows it.
type Term struct {
	// Holder is the identity that holds the lease.
	Holder string
	// Token is the fencing token of this tenure. Pass it to downstream
	// systems with every write they accept from the leader, and have them
	// reject any token lower than the highest they have seen.
	Token uint64
	// TTL is the time to live written with the term.
	TTL time.Duration
	// Sent is the time, on this process's monotonic clock, at which the
	// successful acquire or renew request was sent. A holder must stop
	// acting as leader before Sent+TTL (the runner stops at
	// Sent+RenewDeadline), because the store may have applied the write any
	// time after Sent.
	Sent time.Time
	// Version is the backend's handle for the next Renew or Release: the
	// record version the term was written at, or a native lease ID.
	Version string
	// Annotations are those of the record the term was written with:
	// Acquire carries them over from the record it took over, all but
	// AnnotationHold (a minimum hold is its writer's alone). Renew,
	// Release and Keep write the Term's annotations, so a holder changes
	// them with Annotate and then renews (or releases) the Term.
	Annotations Annotations
}

// Expires returns the instant, on this process's monotonic clock, before
// which the holder must have stopped acting as leader: Sent + TTL.
func (t Term) Expires() time.Time { return t.Sent.Add(t.TTL) }

// Record returns the record that continues the term: its holder, token,
// TTL and annotations, held, with no nonce and no version.
// Backends set the rest before they write it. AnnotationBroken, which
// describes the record the term took over, and AnnotationSuccessor, which
// only ReleaseTo writes, are left out.
func (t Term) Record() Record {
	return Record{Holder: t.Holder, Token: t.Token, TTL: t.TTL, Annotations: t.Annotations.With(AnnotationBroken, "").With(AnnotationSuccessor, "")}
}

// Annotate returns t with the annotation key set to value, or deleted when
// value is "" (see Annotations.With). The next Renew or Release of the
// returned Term writes it, and refuses it with ErrInvalid if
// Annotations.Validate does.
func (t Term) Annotate(key, value string) Term {
	t.Annotations = t.Annotations.With(key, value)
	return t
}
