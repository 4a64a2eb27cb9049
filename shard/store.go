package shard

import "github.com/leasehold/leasehold/lease/driver"

// Store is what a group of workers needs from a storage service beyond
// leases: driver.Objects, whose doc lists the promises a backend keeps and
// how each service keeps them. The keys of a group, under its prefix
// (Config.Group):
//
//	GROUP/members/ID   a worker's liveness lease (a lease.Lease record)
//	GROUP/assigner     the assigner's lease (a lease.Lease record)
//	GROUP/acks/ID      a worker's acknowledgement (a small object, Ack)
//	GROUP/assignment   who owns which shard (one object, N·7 bytes or so)
type Store = driver.Objects

// StoreJudgedLeases is implemented by a Store whose leases the store
// judges (lease.JudgedByStore, such as Azure's native leases, whose
// renewals keep the object's version) and whose List reports, for a key
// that holds such a lease, the lease's state as the store judges it at the
// listing's instant, as a version:
//
//   - while the store reports the lease held, a version that differs from
//     every version any earlier listing reported;
//   - while it reports it free (lapsed, released or broken), or the key
//     holds no lease, the object's own version, which changes only when
//     the object is written.
//
// The assigner's count (rule 2, see the package doc) then sees a held
// lease change at every listing, and runs a count only over listings at
// which the store said the lease was free. The store frees a lease only
// once its duration (the TTL) has passed since the last renewal it
// accepted, by which time the holder, which stops at sent + RenewDeadline
// of the last renewal it sent, had stopped; the count adds a full TTL on
// the assigner's clock. Run refuses a Store whose leases are judged by the
// store unless it implements StoreJudgedLeases and ListsLeaseState
// returns true.
type StoreJudgedLeases interface {
	Store
	// ListsLeaseState reports whether List reports the state of the
	// store's native leases as above.
	ListsLeaseState() bool
}

// listsLeaseState reports whether s's List shows its native leases' state.
func listsLeaseState(s Store) bool {
	n, ok := s.(StoreJudgedLeases)
	return ok && n.ListsLeaseState()
}

// The keys of a group.
func memberKey(group, id string) string { return group + "/members/" + id }
func ackKey(group, id string) string    { return group + "/acks/" + id }
func assignerKey(group string) string   { return group + "/assigner" }
func assignmentKey(group string) string { return group + "/assignment" }
