package main

import (
	"fmt"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/runner"
)

// shares are the runner's and the lease's defaults as shares of the TTL, in
// words ("9/16"), read from runner.Config.Resolve: help and messages print
// them, so that they say what the runner does.
var shares = newShares()

type timingShares struct {
	renewInterval, renewDeadline, campaignInterval, callTimeout string
}

func newShares() timingShares {
	// A TTL that the common fractions divide exactly.
	const ttl = 20160 * time.Second
	res, err := runner.Config{}.Resolve(lease.Options{TTL: ttl})
	if err != nil {
		panic("leasehold: the runner refuses its own defaults: " + err.Error())
	}
	return timingShares{
		renewInterval:    share(res.RenewInterval, ttl),
		renewDeadline:    share(res.RenewDeadline, ttl),
		campaignInterval: share(res.CampaignInterval, ttl),
		callTimeout:      share(res.LeaseOptions.CallTimeout, ttl),
	}
}

// share is part as a fraction of whole with the least denominator up to
// 64 that gives it exactly ("3/8"), or as a decimal ("0.38") if none does.
func share(part, whole time.Duration) string {
	for den := time.Duration(1); den <= 64; den++ {
		if part*den%whole == 0 {
			return fmt.Sprintf("%d/%d", part*den/whole, den)
		}
	}
	return fmt.Sprintf("%.2g", float64(part)/float64(whole))
}
