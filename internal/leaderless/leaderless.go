// Package leaderless measures how leadership fared across a window of
// time: how long nobody led, and how often the leader changed. The quorum
// lease's tests, leasebench and chaos judge an outage by it.
package leaderless

import (
	"slices"
	"time"
)

// Interval is one leader's tenure.
type Interval struct {
	// Start is when it began to lead.
	Start time.Time
	// End is when it stopped; zero while it leads.
	End time.Time
}

// Window is how leadership fared across a window.
type Window struct {
	// Leaderless is the time within the window that no interval covers.
	Leaderless time.Duration
	// Terms counts the intervals that overlap the window.
	Terms int
	// Changes counts the intervals that began within the window, after
	// its first instant: elections it saw.
	Changes int
}

// Across returns how leadership fared from from to to over ivs, in any
// order.
func Across(ivs []Interval, from, to time.Time) Window {
	ivs = slices.Clone(ivs)
	slices.SortFunc(ivs, func(a, b Interval) int { return a.Start.Compare(b.Start) })
	var w Window
	led := from // the window has had a leader from from up to led
	for _, iv := range ivs {
		if !iv.Start.Before(to) {
			break
		}
		if !iv.End.IsZero() && !iv.End.After(from) {
			continue
		}
		w.Terms++
		if iv.Start.After(from) {
			w.Changes++
		}
		if iv.Start.After(led) {
			w.Leaderless += iv.Start.Sub(led)
		}
		end := to
		if !iv.End.IsZero() && iv.End.Before(to) {
			end = iv.End
		}
		if end.After(led) {
			led = end
		}
	}
	if led.Before(to) {
		w.Leaderless += to.Sub(led)
	}
	return w
}
