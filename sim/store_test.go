package sim_test

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"hash"
	"hash/fnv"
	"slices"
	"sync"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
)

// store is the simulation's one lease record: a driver.CAS whose version
// is the MD5 of the stored bytes (as an S3 ETag), with faults per
// contender identity and a history of every body stored, for restores.
type store struct {
	mu     sync.Mutex
	data   []byte // nil: no record
	bodies [][]byte
	stored []time.Time // when each of bodies was stored
	faults map[string]*faults
	// slow counts the slow calls still under way, which outlive their
	// callers.
	slow sync.WaitGroup
	// hits are the calls that met a fault, for the oracle: a contender cut
	// off from the store cannot see what the record says.
	hits []hit
	// trace hashes every call as it reached the store (who, what, when,
	// in order), so that two runs of one seed can be compared.
	trace      hash.Hash64
	traceUntil time.Time // the horizon: the calls of the shutdown are not traced
	// callTimeout is the fleet's: an answer later than it is a timeout
	// to its caller, which is then as cut off as by a slow call.
	callTimeout time.Duration
	// watched is what an armed restore-hang fault waits for: the next
	// write of a term by this identity that replaces a body of the same
	// term.
	watched map[string]watch
	// under is what an armed restore-under fault waits for: the next
	// takeover of a term of this identity (a write of another term over a
	// body of it).
	under map[string]func(ended lease.Record)
	// acqs are the writes that started a term, and restoredUnder the bodies
	// restore-under put back, for the oracle: a contender that never saw a
	// token may write it again (rule 10 binds only what a Lease has seen),
	// and one that counted a body before it was replaced takes it over
	// when it comes back, however new the record it never saw.
	acqs          []acq
	restoredUnder []restored
	// appliedLate is, while a slow call is applied, when it was sent (see
	// releasedLate).
	appliedLate time.Time
}

// acq is a write that started a term: its holder and token, when it
// landed, the version it replaced ("" for none), the highest token the
// writer's Lease had read or written before it, and how many entries
// restoredUnder had when it landed (those came before it in the store's
// order, even at the same instant).
type acq struct {
	holder   string
	token    uint64
	at       time.Time
	c        *conn
	known    uint64
	replaced string
	restores int
}

// restored is a body restore-under put back, and when; or, broken, the
// released body an operator's break wrote over such a body, having
// counted it before it came back (brokeRestored); or, freed, the released
// body of a term that began by taking such a body over (releasedTaken).
// over is the version of the record it replaced: a Lease that read or
// wrote that one has seen the record move on; hid is the term of that
// record and when restore-under replaced it.
type restored struct {
	at      time.Time
	version string
	broken  bool
	freed   bool
	over    string
	hid     hidden
}

// hidden is the term of a record restore-under replaced (its holder and
// token), and when.
type hidden struct {
	holder string
	token  uint64
	at     time.Time
}

// watch is an armed restore-hang: when its identity's next write of a term
// lands over an earlier body of that term, that body is put back and the
// identity's calls hang for hang.
type watch struct {
	hang time.Duration
	done func() // called when the fault fired
}

type hit struct {
	id  string
	at  time.Time
	cut bool // hung, or slowed or answered past CallTimeout: cut off from the store
}

// hitIn reports whether a call of id met a fault within [from, to].
func (s *store) hitIn(id string, from, to time.Time) bool { return s.hitsIn(id, from, to, false) }

// cutIn reports whether a call of id was hung, or slowed or answered
// past CallTimeout, within [from, to]: a fault armed earlier (slow, hang) meets the calls
// an idle RunOnce caller makes only at its next trigger.
func (s *store) cutIn(id string, from, to time.Time) bool { return s.hitsIn(id, from, to, true) }

func (s *store) hitsIn(id string, from, to time.Time, cut bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, h := range s.hits {
		if h.id == id && (h.cut || !cut) && !h.at.Before(from) && !h.at.After(to) {
			return true
		}
	}
	return false
}

// faults are what the next calls of one identity meet.
type faults struct {
	failReads, failWrites int             // fail before reaching the store
	lose                  int             // writes applied, answers lost
	slow                  int             // calls held for slowFor, past CallTimeout
	slowFor               time.Duration   //
	hungUntil             time.Time       // every call hangs until then
	downUntil             time.Time       // every call fails at once until then
	late                  []time.Duration // the next writes, applied at once, are answered this much later, and the read-back after each
	readBack              time.Duration   // the next read, a late write's read-back, is answered this much later
}

func newStore() *store {
	return &store{faults: map[string]*faults{}, trace: fnv.New64a(), watched: map[string]watch{}, under: map[string]func(lease.Record){}}
}

func version(b []byte) string {
	sum := md5.Sum(b)
	return hex.EncodeToString(sum[:])
}

func (s *store) fault(id string, change func(*faults)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := s.faults[id]
	if f == nil {
		f = &faults{}
		s.faults[id] = f
	}
	change(f)
}

// put stores b as it is, bypassing the engine: a restore, a foreign
// object; nil deletes the record, and with it the history that restores
// draw from (tokens may start again after a delete: an earlier body with
// the same holder and token belongs to another term).
func (s *store) put(b []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.data = b
	if b == nil {
		s.bodies, s.stored = nil, nil
	}
}

// current returns the stored bytes and the record they decode to.
func (s *store) current() ([]byte, lease.Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.data == nil {
		return nil, lease.Record{}, lease.ErrNoRecord
	}
	r, err := driver.DecodeJSON(s.data)
	return s.data, r, err
}

// termBodies returns the bodies stored earlier for the term of r (same
// holder and token, since its latest acquisition), other than r's own, and
// when each was stored. A token may repeat under one holder (a Lease
// opened since a restore-under or a delete never saw it): the bodies of
// the earlier term with it, its release among them, are not this one's
// (sim seed 9000528938: a restore put back w2's earlier term's release
// under its new term with the same token, and w3 took the lease at once).
func (s *store) termBodies(r lease.Record, cur []byte) ([][]byte, []time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var since time.Time
	for _, a := range s.acqs {
		if a.holder == r.Holder && a.token == r.Token {
			since = a.at
		}
	}
	var out [][]byte
	var at []time.Time
	for i, b := range s.bodies {
		old, err := driver.DecodeJSON(b)
		if err == nil && old.Holder == r.Holder && old.Token == r.Token && version(b) != version(cur) && !s.stored[i].Before(since) {
			out, at = append(out, b), append(at, s.stored[i])
		}
	}
	return out, at
}

// latestTerm returns the term of the latest write that started one (its
// holder and token): the engine's current term, whatever body the record
// holds (a restore-under's, or a late write of an ended term landed on it).
func (s *store) latestTerm() (lease.Record, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.acqs) == 0 {
		return lease.Record{}, false
	}
	a := s.acqs[len(s.acqs)-1]
	return lease.Record{Holder: a.holder, Token: a.token}, true
}

// lastValid returns the latest body the engine stored since the record
// was last deleted, or nil.
func (s *store) lastValid() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.bodies) == 0 {
		return nil
	}
	return s.bodies[len(s.bodies)-1]
}

// conn is one contender identity's connection.
type conn struct {
	s  *store
	id string
	// rank orders calls made at one instant: each call reaches the store
	// rank plus its runner's rank (withRank) nanoseconds after it was
	// made, so that the runtime's scheduler, which runs goroutines woken at
	// one instant in no fixed order, does not choose which call lands first.
	rank time.Duration
	// Under the store's lock: the highest token this Lease was answered in
	// a read or wrote, when its reads first returned each version, and
	// the versions it wrote.
	known     uint64
	firstRead map[string]time.Time
	wrote     map[string]bool
}

// saw reports whether c read or wrote version (under the store's lock).
func (c *conn) saw(version string) bool {
	_, read := c.firstRead[version]
	return read || c.wrote[version]
}

// maxRunners bounds the runners that share one identity at one instant
// (a pair's two, a RunOnce's one or two invocations per period).
const maxRunners = 4

type rankKey struct{}

// withRank returns ctx for the calls of an identity's runner j.
func withRank(ctx context.Context, j int) context.Context {
	return context.WithValue(ctx, rankKey{}, time.Duration(j))
}

// call applies id's faults to one call, op, which runs under the store's
// lock. A slow call is applied when its delay ends, whether or not its
// caller still waits.
func (c *conn) call(ctx context.Context, write bool, op func() error) error {
	j, _ := ctx.Value(rankKey{}).(time.Duration)
	if d := c.rank + j; d > 0 {
		time.Sleep(d)
	}
	s := c.s
	s.mu.Lock()
	f := s.faults[c.id]
	if f == nil {
		f = &faults{}
		s.faults[c.id] = f
	}
	if time.Now().Before(s.traceUntil) {
		fmt.Fprintf(s.trace, "%s %t %d;", c.id, write, time.Now().UnixNano())
	}
	hung, fail, lose, slow, late := time.Until(f.hungUntil), false, false, time.Duration(0), time.Duration(0)
	switch {
	case hung > 0:
	case time.Now().Before(f.downUntil):
		fail = true
	case !write && f.failReads > 0:
		f.failReads--
		fail = true
	case write && f.failWrites > 0:
		f.failWrites--
		fail = true
	case f.slow > 0:
		f.slow--
		slow = f.slowFor
	case write && f.lose > 0:
		f.lose--
		lose = true
	case write && len(f.late) > 1:
		late, f.readBack, f.late = f.late[0], f.late[1], f.late[2:]
	case !write && f.readBack > 0:
		late, f.readBack = f.readBack, 0
	}
	if hung > 0 || fail || slow > 0 || late > 0 {
		s.hits = append(s.hits, hit{c.id, time.Now(), hung > 0 || slow > 0 || late >= s.callTimeout})
	}
	s.mu.Unlock()
	switch {
	case hung > 0:
		t := time.NewTimer(hung)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
			return fmt.Errorf("%w: sim: the store did not answer %s", lease.ErrUnavailable, c.id)
		}
	case fail:
		return fmt.Errorf("%w: sim: injected failure for %s", lease.ErrUnavailable, c.id)
	case slow > 0:
		done := make(chan error, 1)
		sent := time.Now()
		s.slow.Go(func() {
			time.Sleep(slow)
			s.mu.Lock()
			defer s.mu.Unlock()
			s.appliedLate = sent
			done <- op()
			s.appliedLate = time.Time{}
		})
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-done:
			return err
		}
	}
	s.mu.Lock()
	err := op()
	s.mu.Unlock()
	if late > 0 { // applied, answered late: past the caller's timeout, not at all
		t := time.NewTimer(late)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
	if lose {
		return fmt.Errorf("%w: sim: answer lost for %s (applied: %t)", lease.ErrUnavailable, c.id, err == nil)
	}
	return err
}

func (c *conn) Get(ctx context.Context) (lease.Record, error) {
	var b []byte
	err := c.call(ctx, false, func() error { b = c.s.data; return nil })
	switch {
	case err != nil:
		return lease.Record{}, err
	case b == nil:
		return lease.Record{}, fmt.Errorf("%w: sim", lease.ErrNoRecord)
	}
	r, err := driver.DecodeJSON(b)
	if err != nil {
		return lease.Record{}, err
	}
	r.Version = version(b)
	c.s.mu.Lock() // answered: this Lease has seen r
	c.known = max(c.known, r.Token)
	if c.firstRead == nil {
		c.firstRead = map[string]time.Time{}
	}
	if _, ok := c.firstRead[r.Version]; !ok {
		c.firstRead[r.Version] = time.Now()
	}
	c.s.mu.Unlock()
	return r, nil
}

func (c *conn) Create(ctx context.Context, r lease.Record) (string, error) {
	return c.write(ctx, r, func() bool { return c.s.data == nil })
}

func (c *conn) Replace(ctx context.Context, r lease.Record, v string) (string, error) {
	return c.write(ctx, r, func() bool { return c.s.data != nil && version(c.s.data) == v })
}

func (c *conn) write(ctx context.Context, r lease.Record, cond func() bool) (string, error) {
	b := driver.EncodeJSON(r)
	err := c.call(ctx, true, func() error {
		if !cond() {
			return fmt.Errorf("%w: sim", driver.ErrConflict)
		}
		replaced := c.s.data
		c.s.data = b
		c.s.bodies, c.s.stored = append(c.s.bodies, b), append(c.s.stored, time.Now())
		c.s.newTerm(c, replaced, r)
		c.s.brokeRestored(c, replaced, r, b)
		c.s.releasedLate(replaced, r, b)
		c.s.releasedTaken(c, r, b)
		c.known = max(c.known, r.Token)
		if c.wrote == nil {
			c.wrote = map[string]bool{}
		}
		c.wrote[version(b)] = true
		c.s.restoreHang(c.id, replaced, r)
		return nil
	})
	return version(b), err
}

// restoreHang fires id's armed restore-hang fault, if any, on a write of
// r that replaced the body old (under the store's lock): when old is of
// r's term, it is put back, and id's calls hang.
func (s *store) restoreHang(id string, old []byte, r lease.Record) {
	w, ok := s.watched[id]
	if !ok || old == nil {
		return
	}
	prev, err := driver.DecodeJSON(old)
	if err != nil || prev.Holder != r.Holder || prev.Token != r.Token {
		return
	}
	delete(s.watched, id)
	s.data = old
	s.faults[id].hungUntil = time.Now().Add(w.hang)
	w.done()
}

// newTerm notes a write of r by c that replaced old (under the store's
// lock) if it started a term, and fires the armed restore-under fault of
// old's holder, if any.
func (s *store) newTerm(c *conn, old []byte, r lease.Record) {
	var prev lease.Record
	v := ""
	if old != nil {
		var err error
		if prev, err = driver.DecodeJSON(old); err != nil {
			prev = lease.Record{}
		}
		v = version(old)
	}
	if prev.Holder == r.Holder && prev.Token == r.Token {
		return
	}
	s.acqs = append(s.acqs, acq{holder: r.Holder, token: r.Token, at: time.Now(), c: c, known: c.known, replaced: v, restores: len(s.restoredUnder)})
	if fire, ok := s.under[prev.Holder]; ok && prev.Holder != "" {
		delete(s.under, prev.Holder)
		fire(prev)
	}
}

// heldBodies returns the held bodies stored for the term of r (same holder
// and token), oldest first.
func (s *store) heldBodies(r lease.Record) [][]byte {
	var out [][]byte
	for _, b := range s.bodies {
		old, err := driver.DecodeJSON(b)
		if err == nil && old.Holder == r.Holder && old.Token == r.Token && !old.Released {
			out = append(out, b)
		}
	}
	return out
}

// acqOf returns the write that started the term of holder and token
// latest by at.
func (s *store) acqOf(holder string, token uint64, at time.Time) (acq, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := len(s.acqs) - 1; i >= 0; i-- {
		if a := s.acqs[i]; a.holder == holder && a.token == token && !a.at.After(at) {
			return a, true
		}
	}
	return acq{}, false
}

// tookRestored reports whether a, a takeover, replaced a body that
// restore-under had put back under the term of holder and token, with a
// count its Lease began before that body came back: it counted the body
// before the record moved on, and never saw the newer record (a restore
// of another term's body under a live holder, which no design that reads
// only the object can tell); or replaced the record a break wrote over
// such a body (brokeRestored). A Lease that read or wrote the newer record
// did see it move on (sim seed 5000004462: two Runners on one Lease, the
// second taking over the body the first's acquisition had replaced); its
// own token does not tell, as a token may repeat under restore-under
// (seed 6000091991).
// The body came back before the takeover in the store's order, not by the
// clock: a contender whose task lingered until restore-under fired (its
// Lease's count of the body complete, begun before the record moved on)
// takes the body over at the very instant it comes back (seed 8000322575:
// a pair's Runner, its term lost to a restore, whose Lease had counted its
// own term's body; the strict instant judged the body not yet back).
// Only the term whose record the body replaced can lead beside the taker
// unseen, and only until its renew deadline (hidden.leads): a takeover of
// a restored body excuses no overlap with anyone else, nor one after
// then.
func (s *store) tookRestored(a acq, holder string, token uint64, at time.Time, leads time.Duration) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, rs := range s.taken(a, false) {
		if rs.hid.leads(holder, token, at, leads) {
			return true
		}
	}
	return false
}

// leads reports whether the term of holder and token is the one h hid,
// and may still lead at at: its last write was sent before restore-under
// replaced its record, so its task ends within leads of then (the longest
// a term's task runs after its last write was sent: to its renew
// deadline, or a drained child to runner.Expiry).
func (h hidden) leads(holder string, token uint64, at time.Time, leads time.Duration) bool {
	return h.holder == holder && h.token == token && !at.After(h.at.Add(leads))
}

// taken returns the entries of restoredUnder (freed ones, or the others)
// that a, a takeover, replaced as tookRestored says (under the store's
// lock).
func (s *store) taken(a acq, freed bool) []restored {
	var out []restored
	for _, rs := range s.restoredUnder[:a.restores] {
		if rs.freed == freed && rs.version == a.replaced && !a.c.saw(rs.over) {
			if t, ok := a.c.firstRead[rs.version]; rs.freed || rs.broken || ok && t.Before(rs.at) {
				out = append(out, rs)
			}
		}
	}
	return out
}

// tookFreed reports whether a, a takeover, replaced the released body of a
// term that began by taking over a body restore-under put back under the
// term of holder and token (releasedTaken), with a Lease that never saw a
// record of that term (one that did would know the lease had moved on,
// and a token under two holders is a restore). Only that holder is
// waived, and only while it may still lead at at (hidden.leads).
func (s *store) tookFreed(a acq, holder string, token uint64, at time.Time, leads time.Duration) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !slices.ContainsFunc(s.taken(a, true), func(rs restored) bool { return rs.hid.leads(holder, token, at, leads) }) {
		return false
	}
	for _, b := range s.bodies {
		if r, err := driver.DecodeJSON(b); err == nil && r.Holder == holder && r.Token == token && a.c.saw(version(b)) {
			return false
		}
	}
	return true
}

// releasedTaken notes b, a release of r by its holder c, when r's term
// began by taking over a body restore-under put back (tookRestored), or a
// record freed so (tookFreed): the release frees the lease at once, while
// the holder whose record restore-under replaced leads on until its next
// renewal finds it gone, and whoever takes the released record then, never
// having seen that holder's record, cannot tell either (sim seed
// 8000200291: w0 took over w1's body put back under w2, ran its task and
// released it, and w1 took the released record while w2 led).
func (s *store) releasedTaken(c *conn, r lease.Record, b []byte) {
	if !r.Released || r.Holder != c.id {
		return
	}
	for i := len(s.acqs) - 1; i >= 0; i-- {
		a := s.acqs[i]
		if a.holder != r.Holder || a.token != r.Token {
			continue
		}
		for _, rs := range append(s.taken(a, false), s.taken(a, true)...) {
			s.restoredUnder = append(s.restoredUnder, restored{at: time.Now(), version: version(b), freed: true, over: rs.over, hid: rs.hid})
		}
		return
	}
}

// brokeRestored notes b, a break of old by c (a released record of
// another holder), when old is a body restore-under put back that c
// counted before it came back: the break judged it lapsed on a watch that
// never saw the newer record, as a takeover of it would (tookRestored),
// and whoever takes the broken record over next cannot tell either.
func (s *store) brokeRestored(c *conn, old []byte, r lease.Record, b []byte) {
	if !r.Released || r.Holder == c.id || old == nil {
		return
	}
	for _, rs := range s.restoredUnder {
		if t, ok := c.firstRead[rs.version]; ok && rs.version == version(old) && !rs.broken && t.Before(rs.at) {
			s.restoredUnder = append(s.restoredUnder, restored{at: time.Now(), version: version(b), broken: true, over: rs.over, hid: rs.hid})
			return
		}
	}
}

// releasedLate notes b, a release of r applied after its caller had given
// up on it (a slow call, applied past its CallTimeout: appliedLate is
// when it was sent), over old, a body restore-under put back after the
// release was sent: a released body under a live holder, which
// restore-under never puts back itself, since whoever then takes it over
// at once cannot tell (see the package doc). No holder can bound when a
// write it gave up on lands (sim seed 6000156237).
func (s *store) releasedLate(old []byte, r lease.Record, b []byte) {
	if !r.Released || s.appliedLate.IsZero() || old == nil {
		return
	}
	for _, rs := range s.restoredUnder {
		if rs.version == version(old) && !rs.broken && rs.at.After(s.appliedLate) {
			s.restoredUnder = append(s.restoredUnder, restored{at: time.Now(), version: version(b), broken: true, over: rs.over, hid: rs.hid})
			return
		}
	}
}

// restoredUnderBy reports whether restore-under put a body back by at.
func (s *store) restoredUnderBy(at time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.restoredUnder) > 0 && !s.restoredUnder[0].at.After(at)
}

// noKeep hides a lease's Keep (and Break): a store shaped as Azure's,
// whose record cannot stay held without its holder.
type noKeep struct{ lease.Lease }

// casCaps is what a CAS Lease offers beyond lease.Lease.
type casCaps interface {
	lease.Lease
	lease.Keeper
	lease.Breaker
	lease.Watcher
}

// ranked enters an Acquire its runner's rank (withRank) nanoseconds after
// it was called, as conn.call does each call: a Lease takes its Acquires
// one at a time, and which of two called at one instant (a pair's) gets
// there first is otherwise the runtime's choice, and a seed would not
// replay exactly.
type ranked struct{ casCaps }

func (r ranked) Acquire(ctx context.Context) (lease.Term, error) {
	if j, _ := ctx.Value(rankKey{}).(time.Duration); j > 0 {
		time.Sleep(j)
	}
	return r.casCaps.Acquire(ctx)
}

// restoreUnder is an armed restore-under firing: ended, a term of id, was
// taken over; a held body of it is put back under its successor (with
// s.N = 1 the latest stored, which a restore may have hidden; else one
// drawn from s.Seed), and id's calls, if hung, come back.
func (s *store) restoreUnder(id string, ended lease.Record, st step) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f := s.faults[id]; f != nil && f.hungUntil.After(time.Now()) {
		f.hungUntil = time.Now()
	}
	bodies := s.heldBodies(ended)
	if len(bodies) == 0 || s.data == nil {
		return
	}
	b := bodies[len(bodies)-1]
	if st.N > 1 {
		b = bodies[st.Seed%uint64(len(bodies))]
	}
	if version(b) == version(s.data) {
		return
	}
	over := version(s.data)
	hid := hidden{at: time.Now()}
	// The term the body hides is the record's, or, under a foreign object
	// (which a person puts back later), that of the latest record the
	// engine stored, which the foreign object replaced (seed 9000044101:
	// restore-under over a foreign object, its hidden term unnamed, and
	// the taker's overlap with it not waived).
	cur := s.data
	if _, err := driver.DecodeJSON(cur); err != nil && len(s.bodies) > 0 {
		cur = s.bodies[len(s.bodies)-1]
	}
	if r, err := driver.DecodeJSON(cur); err == nil {
		hid.holder, hid.token = r.Holder, r.Token
	}
	s.data = b
	s.restoredUnder = append(s.restoredUnder, restored{at: time.Now(), version: version(b), over: over, hid: hid})
}
