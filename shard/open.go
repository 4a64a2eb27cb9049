package shard

import (
	"context"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
)

// OpenStore opens the Store of the group named by urlstr, a lease URL whose
// key is the group's prefix, such as "s3://bucket/jobs" (the group "jobs"
// in the bucket) or "mem://jobs", for the worker opts.Identity, and returns
// it with the group's prefix, for Config.Store and Config.Group. The
// scheme's backend must have been imported (it registers with
// driver.RegisterObjects). Errors wrap lease.ErrInvalid for a malformed URL
// or an unknown scheme (the message lists the registered ones).
func OpenStore(ctx context.Context, urlstr string, opts lease.Options) (Store, string, error) {
	return driver.OpenObjects(ctx, urlstr, opts)
}
