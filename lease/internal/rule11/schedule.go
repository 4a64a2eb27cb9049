package rule11

import (
	"maps"

	"github.com/leasehold/leasehold/lease"
)

// Writer names this version's folder of fixtures.
const Writer = "current"

// seesOthers: this version reads annotations of other layers.
const seesOthers = true

// withSchedule returns r with c's schedule state and other annotations, as
// this version stores them, and whether it can store them all.
func withSchedule(r lease.Record, c Case) (lease.Record, bool) {
	m := maps.Clone(c.Others)
	if m == nil {
		m = map[string]string{}
	}
	m[lease.AnnotationPeriod] = c.Period
	if c.Done {
		m[lease.AnnotationPeriodDone] = "1"
	}
	if c.Hold {
		m[lease.AnnotationHold] = "1"
	}
	r.Annotations = lease.NewAnnotations(m)
	return r, true
}

// scheduleOf returns r's schedule state and other annotations.
func scheduleOf(r lease.Record) (period string, done, hold bool, others map[string]string) {
	others = r.Annotations.Map()
	period, done, hold = others[lease.AnnotationPeriod], others[lease.AnnotationPeriodDone] == "1", others[lease.AnnotationHold] == "1"
	for _, k := range []string{lease.AnnotationPeriod, lease.AnnotationPeriodDone, lease.AnnotationHold} {
		delete(others, k)
	}
	if len(others) == 0 {
		others = nil
	}
	return period, done, hold, others
}
