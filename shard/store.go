package shard

import (
	"strings"

	"github.com/leasehold/leasehold/lease/driver"
)

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

// The keys of a group.
func memberKey(group, id string) string { return group + "/members/" + id }
func ackKey(group, id string) string    { return group + "/acks/" + id }
func assignerKey(group string) string   { return group + "/assigner" }
func assignmentKey(group string) string { return group + "/assignment" }

// memberID returns the identity whose liveness key is key, listed under
// prefix (memberKey(group, "")); ok is false for the object a store's
// probe writes beside a lease's key (driver.ProbeSuffix), which is no
// member's: an assigner that counted it would wait a TTL for it to expire.
func memberID(prefix, key string) (id string, ok bool) {
	id = strings.TrimPrefix(key, prefix)
	return id, !strings.HasSuffix(id, driver.ProbeSuffix)
}
