package driver

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/leasehold/leasehold/lease"
)

// Store says what a backend's store is and what a lease on it needs: the
// one description that tools checking or documenting a lease read
// (leasehold check and help, the Terraform modules' tests), instead of
// keeping tables of their own by URL scheme. A backend registers its
// Store with RegisterStore in its init function, beside lease.Register.
type Store struct {
	// Scheme is the scheme of the backend's lease URLs, as registered
	// with lease.Register: "s3".
	Scheme string
	// Name names the service as its users know it: "Amazon S3".
	Name string
	// Judge is who judges that a holder's term has lapsed: what
	// Lease.Judge returns for every lease of the backend.
	Judge lease.Judge
	// Holds says what must exist before a lease is first used, and what a
	// successful read of the lease shows of it: "the bucket is there".
	// Empty when nothing need exist.
	Holds string
	// Probe says, in a sentence, how the backend's Verify checks that the
	// store enforces conditional writes (Verifier), on a probe key beside
	// the lease's (ProbeSuffix). Empty when the backend has no such check,
	// and Conditions says why none is needed.
	Probe string
	// Conditions says why the store needs no probe, when Probe is empty.
	Conditions string
	// TTLs says which TTLs the store allows, and why, when it allows fewer
	// than lease.Options does: "15s to 60s, in whole seconds: ...". Empty
	// when it allows them all. The backend's Open refuses the others.
	TTLs string
	// Grants are the permissions a least-privilege identity needs: every
	// call the backend makes, its probe's included, is allowed by one of
	// them, and none allows more than the backend calls (but for the
	// grants that a store needs to answer as the backend expects, which
	// say so in their Why).
	Grants []Grant
	// Price says how the store's requests are priced.
	Price Price
	// FollowerReads is how many times per renewal of its holder a
	// follower reads a lease on the store, once it has learned when the
	// holder renews, where the runner's default (runner.DefaultFollowerReads,
	// 2) does not suit: more on a store whose TTL cannot be shortened to
	// make a handover quicker (Azure's is 15s at least), as a follower
	// sees a release at its next read. The backend's Lease says the same
	// (lease.FollowerReader). 0: the runner's default.
	FollowerReads int
}

// Grant is one permission set of a Store, on one resource.
type Grant struct {
	// Actions are the permissions, as the cloud's IAM names them
	// ("s3:GetObject"), sorted.
	Actions []string
	// Resource names what they are granted on, with the parts of the
	// lease's URL in capitals: "arn:aws:s3:::BUCKET/KEY".
	Resource string
	// Probe is true for a grant that only Verify's probe needs (on the
	// probe key, KEY and ProbeSuffix).
	Probe bool
	// Condition, if its Key is set, is the IAM condition the grant is
	// given with, which limits it to what the backend needs.
	Condition Condition
	// Why says what needs the grant, as a clause.
	Why string
	// NotCalled is true for a grant whose actions the backend never calls,
	// that the store needs to answer as the backend expects (S3 answers a
	// read of a missing object with 404 only to a caller that may list the
	// bucket).
	NotCalled bool
	// Group is true for a grant that only a shard group needs (package
	// shard's Store: the group's leases and objects, and the listing of
	// its keys), not a lease alone. Its Resource names the group's keys
	// with GROUP, "arn:aws:s3:::BUCKET/GROUP/*": a Resource that ends in
	// "*" covers every key that begins with what precedes it.
	Group bool
}

// Condition is an IAM condition on a grant: the condition key Key (such
// as "s3:prefix") equals one of Values, written with the parts of the
// lease's URL in capitals as a Grant's Resource is.
type Condition struct {
	// Key is the IAM condition key, such as "s3:prefix".
	Key string
	// Values are the values Key may equal, URL parts in capitals.
	Values []string
}

// String is the grant as help and errors print it: "s3:GetObject,
// s3:PutObject on arn:aws:s3:::BUCKET/KEY"; "s3:ListBucket on
// arn:aws:s3:::BUCKET with s3:prefix = KEY or KEY.leasehold-probe".
func (g Grant) String() string {
	s := strings.Join(g.Actions, ", ") + " on " + g.Resource
	if c := g.Condition; c.Key != "" {
		s += " with " + c.Key + " = " + strings.Join(c.Values, " or ")
	}
	return s
}

// ProbeGrants returns the grants that Verify's probe needs, as one
// sentence; "" when there are none.
func (s Store) ProbeGrants() string {
	var out []string
	for _, g := range s.Grants {
		if g.Probe {
			out = append(out, g.String())
		}
	}
	return strings.Join(out, "; ")
}

// Price names the requests of a lease as the store's price list labels
// them (see internal/pricing).
type Price struct {
	// Service is the store's price list: "S3", "DynamoDB", "Azure Blob",
	// "Cloud Storage", "memory".
	Service string
	// Renew labels a leader's renewal ("PUT"), Poll a follower's read of
	// a held lease ("GET").
	Renew, Poll string
	// Show labels the request with which a holder makes each renewal
	// show, on a native lease whose renewals do not change the record by
	// themselves (Azure: "PUT metadata"), made once per renewal; empty
	// when the renewal itself changes the record, or nothing shows it.
	Show string
}

// RenewalsShow reports whether every renewal of a lease on the store
// changes the record's version (lease.RenewalsShow): on a store judged by
// its contenders, and on one whose renewals are shown by Price.Show.
func (s Store) RenewalsShow() bool {
	return s.Judge == lease.JudgedByContender || s.Price.Show != ""
}

var registered = struct {
	sync.RWMutex
	m map[string]Store
}{m: map[string]Store{}}

// RegisterStore records a backend's Store, by its Scheme. It panics when
// the scheme is registered twice or the Store leaves out what every Store
// says, as those are programming errors caught at start-up.
func RegisterStore(s Store) {
	registered.Lock()
	defer registered.Unlock()
	switch {
	case s.Scheme == "" || s.Name == "" || s.Price.Service == "":
		panic(fmt.Sprintf("driver: Store %+v has no Scheme, Name or Price.Service", s))
	case s.Judge != lease.JudgedByContender && s.Judge != lease.JudgedByStore:
		panic("driver: Store " + s.Scheme + " has no Judge")
	case (s.Probe == "") == (s.Conditions == ""):
		panic("driver: Store " + s.Scheme + " must have exactly one of Probe and Conditions")
	}
	if _, dup := registered.m[s.Scheme]; dup {
		panic("driver: Store " + s.Scheme + " registered twice")
	}
	registered.m[s.Scheme] = s
}

// LookupStore returns the Store registered for scheme.
func LookupStore(scheme string) (Store, bool) {
	registered.RLock()
	defer registered.RUnlock()
	s, ok := registered.m[scheme]
	return s, ok
}

// Stores returns the registered Stores, by scheme.
func Stores() []Store {
	registered.RLock()
	defer registered.RUnlock()
	out := make([]Store, 0, len(registered.m))
	for _, s := range registered.m {
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b Store) int { return strings.Compare(a.Scheme, b.Scheme) })
	return out
}
