package shard

import "github.com/leasehold/leasehold/runner"

// Requests are requests a worker sends to its group's store per renew
// interval.
type Requests struct {
	// Writes are conditional writes (PUTs).
	Writes float64
	// Reads are reads of one object (GETs).
	Reads float64
	// Lists are listings of the group's prefix.
	Lists float64
}

// SteadyRequests returns the requests per renew interval of a worker in a
// steady group (no change of ownership or of assigner), whatever the
// number of shards, on a store whose every renewal is renewalWrites
// writes (2 on Azure Blob: the renewal and the metadata write that shows
// it; 1 elsewhere): member, a worker that does not campaign to be the
// assigner (Config.NoAssigner), which renews its liveness and reads the
// assignment (answered "unchanged" unless it changed) and, every
// ackCheckEvery reads, its acknowledgement; campaigner, one that also
// follows the assigner's lease; and assigner, the assigner's worker,
// which renews the assigner lease too and lists the group.
func SteadyRequests(renewalWrites int) (member, campaigner, assigner Requests) {
	w := float64(renewalWrites)
	member = Requests{Writes: w, Reads: 1 + 1.0/ackCheckEvery}
	campaigner = member
	campaigner.Reads += runner.DefaultFollowerReads
	assigner = Requests{Writes: 2 * w, Reads: member.Reads, Lists: listsPerRenewal}
	return member, campaigner, assigner
}
