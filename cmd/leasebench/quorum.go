package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/leasehold/leasehold/internal/ctxtime"
	"github.com/leasehold/leasehold/internal/leaderless"
	"github.com/leasehold/leasehold/internal/toxiproxy"
	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/quorumlease"
)

// The quorums leasebench knows, after storeNames in -backends' default,
// and their members' stores, in the members' order: three memleases, and
// three emulators of three services.
var (
	quorumNames   = []string{"quorum-mem", "quorum-emulators"}
	quorumMembers = map[string][]string{
		"quorum-mem":       {"mem", "mem", "mem"},
		"quorum-emulators": {"minio", "dynalite", "gcs"},
	}
)

// firstLeaderContenders is how many contenders start together in a first
// leader trial.
const firstLeaderContenders = 5

// quorum is a quorum's members, set up, and what cuts one off.
type quorum struct {
	name    string
	members []*store
	// ttl is the quorum's TTL: the longest of its members' (every member
	// of a quorum has the same).
	ttl time.Duration
	// tp cuts the members off that are reached over the network; nil when
	// LEASEHOLD_TOXIPROXY_URL is not set.
	tp *toxiproxy.Client
}

// setupQuorum sets up the members of the quorum called name, each a store
// of its own (a bucket, table or memlease store). It returns a nil quorum
// and the reason when a member's store is not configured.
func setupQuorum(ctx context.Context, name string, ttl time.Duration) (*quorum, string, error) {
	q := &quorum{name: name, ttl: ttl}
	if u := os.Getenv("LEASEHOLD_TOXIPROXY_URL"); u != "" {
		q.tp = toxiproxy.New(u)
	}
	names := quorumMembers[name]
	for i, m := range names {
		st, why, err := setupStore(ctx, m, ttl)
		if st == nil {
			q.cleanup(context.WithoutCancel(ctx))
			return nil, "member " + m + ": " + why, err
		}
		if slices.Index(names, m) < i || slices.Contains(names[i+1:], m) {
			st.name = fmt.Sprintf("%s-%d", m, i+1) // three memleases: mem-1, mem-2, mem-3
		}
		q.members = append(q.members, st)
		q.ttl = max(q.ttl, st.ttl)
	}
	return q, "", nil
}

func (q *quorum) cleanup(ctx context.Context) {
	for _, m := range q.members {
		m.cleanup(ctx)
	}
}

// over returns the quorum of members as one store: its connect opens the
// quorum lease on a connection of its own to each member.
func (q *quorum) over(name string, members []*store) *store {
	return &store{
		name: name, ttl: q.ttl, members: members,
		connect: func(string) (opener, error) {
			opens := make([]opener, len(members))
			for i, m := range members {
				var err error
				if opens[i], err = m.connect(m.endpoint); err != nil {
					return nil, err
				}
			}
			return quorumOf(opens, memberNames(members)), nil
		},
		cleanup: func(context.Context) {},
	}
}

func memberNames(members []*store) []string {
	names := make([]string, len(members))
	for i, m := range members {
		names[i] = m.name
	}
	return names
}

// quorumOf opens a quorum lease over one lease of each of opens, named
// names.
func quorumOf(opens []opener, names []string) opener {
	return func(ctx context.Context, name string, opts lease.Options) (lease.Lease, error) {
		ls := make([]lease.Lease, len(opens))
		for i, open := range opens {
			l, err := open(ctx, name, opts)
			if err != nil {
				return nil, err
			}
			ls[i] = l
		}
		return quorumlease.New(ls, names)
	}
}

// countedQuorum is counted for a quorum: its members' requests, each
// member's total under its name.
func (st *store) countedQuorum(role string) (opener, func() map[string]int, func(), error) {
	var (
		opens []opener
		takes []func() map[string]int
		dones []func()
	)
	done := func() {
		for _, d := range dones {
			d()
		}
	}
	for _, m := range st.members {
		open, take, d, err := m.counted(role)
		if err != nil {
			done()
			return nil, nil, nil, err
		}
		opens, takes, dones = append(opens, open), append(takes, take), append(dones, d)
	}
	names := memberNames(st.members)
	take := func() map[string]int {
		n := map[string]int{}
		for i, t := range takes {
			n[names[i]] = total(t())
		}
		return n
	}
	return quorumOf(opens, names), take, done, nil
}

// cut is how an outage cuts a store off from the contenders that reach it
// through a link.
type cut int

const (
	// cutRefuse fails their calls at once: a stopped store's refused
	// connections (toxiproxy's proxy disabled; memlease's Partition).
	cutRefuse cut = iota + 1
	// cutHang holds their calls until the calls' timeouts: a partition
	// that drops their packets (toxiproxy's timeout toxic on the requests;
	// memlease's Hang).
	cutHang
)

func (c cut) String() string {
	switch c {
	case cutRefuse:
		return "refusing"
	case cutHang:
		return "hanging"
	}
	return "up"
}

// link is a way to one store that an outage can cut: st is the store as
// reached through it.
type link struct {
	st    *store
	set   func(how cut) error // 0 heals
	close func(ctx context.Context)
}

// link returns a link to st. A memory store's link is a memlease store of
// its own, whose contenders' calls it fails or hangs (by identity, as
// quorumlease's tests do); another's is a toxiproxy proxy in front of the
// store's endpoint. It returns a nil link and the reason when toxiproxy is
// not configured.
func (q *quorum) link(ctx context.Context, st *store) (*link, string, error) {
	if st.mem != nil {
		fresh, _, err := setupStore(ctx, "mem", st.ttl)
		if err != nil {
			return nil, "", err
		}
		return memLink(st.name, fresh), "", nil
	}
	if q.tp == nil {
		return nil, "LEASEHOLD_TOXIPROXY_URL is not set (scripts/stack up; eval \"$(scripts/stack env)\")", nil
	}
	u, err := url.Parse(st.endpoint)
	if err != nil {
		return nil, "", fmt.Errorf("%s: endpoint %q: %w", st.name, st.endpoint, err)
	}
	proxy := "leasebench-" + st.name + "-" + randomHex(4)
	listen, err := q.tp.Create(proxy, u.Host)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", st.name, err)
	}
	through := *st
	through.endpoint = u.Scheme + "://" + listen
	var now cut
	return &link{
		st: &through,
		set: func(how cut) error {
			var err error
			switch {
			case now == cutRefuse:
				err = q.tp.Enable(proxy, true)
			case now == cutHang:
				err = q.tp.RemoveToxic(proxy, "cut")
			}
			if err == nil {
				switch how {
				case cutRefuse:
					err = q.tp.Enable(proxy, false)
				case cutHang:
					err = q.tp.AddToxic(proxy, "cut", "timeout", "upstream", map[string]int{"timeout": 0})
				}
			}
			now = how
			return err
		},
		close: func(context.Context) { _ = q.tp.Delete(proxy) },
	}, "", nil
}

// memLink is a link to the memlease store st, called name: it notes the
// identity of every lease opened through it, and cuts them all.
func memLink(name string, st *store) *link {
	var (
		mu  sync.Mutex
		now cut
		ids = map[string]bool{}
	)
	apply := func(id string) {
		switch now {
		case cutRefuse:
			st.mem.Partition(id)
		case cutHang:
			st.mem.Hang(id)
		default:
			st.mem.Heal(id)
		}
	}
	through := *st
	through.name = name
	through.connect = func(ep string) (opener, error) {
		open, err := st.connect(ep)
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context, n string, opts lease.Options) (lease.Lease, error) {
			mu.Lock()
			ids[opts.Identity] = true
			apply(opts.Identity)
			mu.Unlock()
			return open(ctx, n, opts)
		}, nil
	}
	return &link{
		st: &through,
		set: func(how cut) error {
			mu.Lock()
			defer mu.Unlock()
			now = how
			for id := range ids {
				apply(id)
			}
			return nil
		},
		close: func(context.Context) {},
	}
}

// quorumResult is a quorum's table: its member 1 alone, the quorum with
// every member up, and with member 1 cut off each way; and the time
// nobody led during an outage of member 1's store.
type quorumResult struct {
	name    string
	members []string
	ttl     time.Duration
	columns []quorumColumn
	// outage is how long member 1's store was cut off (refusing), and
	// outageSingle and outageQuorum how a lease on that store alone, and
	// the quorum, fared across it.
	outage                     time.Duration
	outageSingle, outageQuorum fared
	outageDone                 bool
	notes, errs                []string
}

// quorumColumn is one column of a quorum's table.
type quorumColumn struct {
	head string
	down cut // member 1's cut; 0 for every member up, or the store alone
	r    *result
}

func (qr *quorumResult) notef(format string, args ...any) {
	qr.notes = append(qr.notes, qr.name+": "+fmt.Sprintf(format, args...))
}

// benchQuorum measures q's table: for each column one after the other,
// crash failover and handover (measureTrials) and the first leader of
// contenders started together; meanwhile every column's requests, and the
// outage.
func benchQuorum(ctx context.Context, c config, q *quorum) *quorumResult {
	m1 := q.members[0]
	qr := &quorumResult{name: q.name, members: memberNames(q.members), ttl: q.ttl, outage: c.outage}
	if q.ttl != c.ttl {
		qr.notef("TTL %v, the longest of its members', instead of -ttl %v", q.ttl, c.ttl)
	}
	var (
		wg        sync.WaitGroup
		outageErr error
	)
	if c.outage > 0 {
		wg.Go(func() {
			progress("%s: %v outage of %s", q.name, c.outage, m1.name)
			qr.outageSingle, qr.outageQuorum, outageErr = outageRun(ctx, q, c.outage)
		})
	}
	alone := *m1
	alone.name, alone.ttl = m1.name+" alone", q.ttl
	cols := []quorumColumn{
		{head: "single store: " + m1.name, r: newResult(&alone)},
		{head: "quorum, all up", r: newResult(q.over(q.name, q.members))},
	}
	for _, how := range []cut{cutRefuse, cutHang} {
		head := "quorum, member 1 " + how.String()
		l, why, err := q.link(ctx, m1)
		if err == nil && l != nil {
			defer l.close(context.WithoutCancel(ctx))
			err = l.set(how)
		}
		switch {
		case err != nil:
			qr.notef("%s: skipped: %v", head, err)
		case l == nil:
			qr.notef("%s: skipped: %s", head, why)
		default:
			members := append([]*store{l.st}, q.members[1:]...)
			cols = append(cols, quorumColumn{head: head, down: how, r: newResult(q.over(q.name+", member 1 "+how.String(), members))})
		}
	}
	// Requests for every column at once, as they mostly wait; the trials
	// column by column.
	for _, col := range cols {
		wg.Go(func() { countRequests(ctx, c, col.r) })
	}
	for _, col := range cols {
		r := col.r
		measureTrials(ctx, c, r)
		// One at a time: twenty trials' hundred contenders starting at once
		// queue at the emulators, and time that (0.3 to 0.8 s instead of
		// 0.05 s on a quorum of emulators).
		progress("%s: %d first elections of %d contenders started together, one after the other", r.st.name, c.trials, firstLeaderContenders)
		var err error
		if r.firstLeader, _, err = trials(ctx, c.trials, 1, func(ctx context.Context) (time.Duration, error) {
			return firstLeaderTrial(ctx, r.st, firstLeaderContenders)
		}); err != nil {
			r.fail("first leader", err)
		}
		if ctx.Err() != nil {
			break
		}
	}
	wg.Wait()
	for _, col := range cols {
		qr.columns = append(qr.columns, col)
		qr.errs = append(qr.errs, col.r.errs...)
	}
	if outageErr != nil {
		qr.errs = append(qr.errs, fmt.Sprintf("%s: outage: %v", q.name, outageErr))
	}
	qr.outageDone = c.outage > 0 && outageErr == nil
	return qr
}

// firstLeaderTrial starts n contenders of a new lease on st at once, each
// a runner at the defaults on a connection of its own, and returns the
// time from their start to the first successful Acquire returning.
func firstLeaderTrial(ctx context.Context, st *store, n int) (time.Duration, error) {
	name := "first-" + randomHex(6)
	probes := make([]*probe, n)
	for i := range probes {
		var err error
		if probes[i], err = st.openProbe(ctx, name, fmt.Sprintf("contender-%d", i+1), variant{}); err != nil {
			return 0, err
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	first := make(chan struct{})
	var once sync.Once
	var cs []*contender
	defer func() {
		for _, c := range cs {
			c.stop()
		}
	}()
	began := time.Now()
	for _, pr := range probes {
		c, err := variant{}.start(ctx, pr)
		if err != nil {
			return 0, err
		}
		cs = append(cs, c)
		go func() {
			select {
			case <-pr.acquired:
				once.Do(func() { close(first) })
			case <-ctx.Done():
			}
		}()
	}
	if err := waitFor(ctx, first, 5*st.ttl, "a leader"); err != nil {
		return 0, err
	}
	var earliest time.Time
	for _, pr := range probes {
		if at, _, _ := pr.times(); !at.IsZero() && (earliest.IsZero() || at.Before(earliest)) {
			earliest = at
		}
	}
	return earliest.Sub(began), nil
}

// outageRun measures an outage of q's member 1's store: three contenders
// of a lease on that store alone and three of the quorum, all reaching it
// through one link, run for three TTLs; the link is cut (refusing) for d,
// then healed, and they run three TTLs more. It returns how the lease
// alone, and the quorum, fared across the outage.
func outageRun(ctx context.Context, q *quorum, d time.Duration) (fared, fared, error) {
	l, why, err := q.link(ctx, q.members[0])
	if err != nil {
		return fared{}, fared{}, err
	}
	if l == nil {
		return fared{}, fared{}, fmt.Errorf("%s", why)
	}
	defer l.close(context.WithoutCancel(ctx))
	alone := *l.st
	alone.ttl = q.ttl
	var groups [2][]*contender
	defer func() {
		for _, g := range groups {
			for _, c := range g {
				c.stop()
			}
		}
	}()
	for i, st := range []*store{&alone, q.over(q.name, append([]*store{l.st}, q.members[1:]...))} {
		name := "outage-" + randomHex(6)
		for _, who := range []string{"a", "b", "c"} {
			pr, err := st.openProbe(ctx, name, "outage-"+who, variant{})
			if err != nil {
				return fared{}, fared{}, err
			}
			c, err := variant{}.start(ctx, pr)
			if err != nil {
				return fared{}, fared{}, err
			}
			groups[i] = append(groups[i], c)
		}
	}
	ctxtime.Sleep(ctx, 3*q.ttl)
	from := time.Now()
	if err := l.set(cutRefuse); err != nil {
		return fared{}, fared{}, err
	}
	ctxtime.Sleep(ctx, d)
	to := time.Now()
	if err := l.set(0); err != nil {
		return fared{}, fared{}, err
	}
	if ctxtime.Sleep(ctx, 3*q.ttl); ctx.Err() != nil {
		return fared{}, fared{}, ctx.Err()
	}
	var out [2]fared
	for i, g := range groups {
		var led []tenure
		for _, c := range g {
			led = append(led, c.tenures()...)
		}
		out[i] = across(led, from, to)
	}
	return out[0], out[1], nil
}

// fared is how a lease fared across an outage: the time within it that
// nobody led, and how many terms were led within it.
type fared struct {
	leaderless time.Duration
	terms      int
}

func (o fared) String() string {
	return fmt.Sprintf("%v (%d %s)", o.leaderless.Round(time.Millisecond), o.terms, plural(o.terms, "term", "terms"))
}

func plural(n int, one, more string) string {
	if n == 1 {
		return one
	}
	return more
}

// across is how the terms led fared across [from, to]: how much of it no
// term covers, and how many terms it overlaps; a term with no end yet
// covers everything after its start.
func across(led []tenure, from, to time.Time) fared {
	ivs := make([]leaderless.Interval, len(led))
	for i, t := range led {
		ivs[i] = leaderless.Interval{Start: t.start, End: t.end}
	}
	w := leaderless.Across(ivs, from, to)
	return fared{w.Leaderless, w.Terms}
}

// table is the quorum's columns side by side.
func (qr *quorumResult) table(trials int) *table {
	t := &table{
		title: fmt.Sprintf("A quorum of three (%s) beside its member 1 alone, in the same run (TTL %v; %d trials each; member 1 down: "+
			"its calls refused at once, or hanging until their timeout, from before the first trial; requests at TTL 15s; "+
			"goals, issue 36: failover p99 ≤ 1.10 TTL all up and ≤ 1.15 one member down, n × one lease's requests, no leaderless instant)",
			strings.Join(qr.members, ", "), qr.ttl, trials),
		header: []string{""},
	}
	var single *result
	for _, col := range qr.columns {
		t.header = append(t.header, col.head)
		if single == nil {
			single = col.r
		}
	}
	row := func(name string, cell func(quorumColumn) string) {
		r := []string{name}
		for _, col := range qr.columns {
			r = append(r, cell(col))
		}
		t.rows = append(t.rows, r)
	}
	for _, reg := range []regime{warmed, justStarted} {
		row("crash failover ÷ TTL min / p50 / p99, follower "+reg.String(), func(c quorumColumn) string {
			return minP50P99(c.r.failover[reg], ratioTo(qr.ttl)) + voidNote(c.r.failoverVoid[reg])
		})
	}
	row("handover p50 / p99", func(c quorumColumn) string { return p50p99(c.r.handover, ms) + voidNote(c.r.handoverVoid) })
	row(fmt.Sprintf("first leader of %d contenders started together, p50 / p99", firstLeaderContenders), func(c quorumColumn) string { return p50p99(c.r.firstLeader, ms) })
	row("leader requests/h", func(c quorumColumn) string { return requests(c.r.leader) })
	row("follower requests/h", func(c quorumColumn) string { return requests(c.r.follower) })
	row("requests ÷ the single store's, leader / follower", func(c quorumColumn) string {
		return timesOf(c.r.leader, single.leader) + " / " + timesOf(c.r.follower, single.follower)
	})
	if qr.outage > 0 {
		row(fmt.Sprintf("leaderless during a %v outage of member 1's store (terms led in it)", qr.outage), func(c quorumColumn) string {
			switch {
			case !qr.outageDone:
				return "–"
			case c.r == single:
				return qr.outageSingle.String()
			case c.down == cutRefuse:
				return qr.outageQuorum.String()
			}
			return "–"
		})
	}
	return t
}

// timesOf shows a's total as a multiple of b's.
func timesOf(a, b map[string]float64) string {
	if a == nil || total(b) == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f ×", total(a)/total(b))
}
