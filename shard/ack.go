package shard

import (
	"cmp"
	"encoding/json"
	"fmt"

	"github.com/leasehold/leasehold/lease/driver"
)

// ack is a worker term's acknowledgement, the one object a worker writes
// besides its liveness lease, and only when ownership changes: when its
// term starts (Applied 0), after it stopped the shards an assignment took
// from it or applied a fence (Applied: that assignment's Gen), and when its
// term ends (Left). Each says something true of the term from then on: it
// runs no shard that the assignment Applied does not give it, and, once
// Left, none at all.
type ack struct {
	Format  int    `json:"leasehold_shard_ack"`
	Token   uint64 `json:"token"`
	Applied uint64 `json:"applied"`
	Left    bool   `json:"left,omitempty"`
	// Restarting is written over the term's latest acknowledgement by a
	// new process of the same worker, which found the term's liveness
	// lease still held and waits for it to lapse: the assigner then keeps
	// the term's shards for the worker, for a TTL after the term expired,
	// instead of giving them to others (see assigner.dead). It tells the
	// assigner to wait, never to start anything.
	Restarting bool `json:"restarting,omitempty"`
	// Lease is the token of the term's liveness lease (the record's, which
	// Token is not: see termToken); 0 in an acknowledgement written by an
	// earlier version, or by an assigner that buried a term it never read.
	Lease uint64 `json:"lease,omitempty"`
	// Seen is the highest Gen the worker's process had read or written
	// when it wrote this (a hello: its earlier terms'), 0 in an
	// acknowledgement of an earlier version: a new assigner raises its
	// Gens above it (assigner.raise), although Applied, which a worker
	// writes only when asked, may say less, and the assignment that
	// named that Gen may be gone.
	Seen uint64 `json:"seen,omitempty"`
	// After is the liveness name (liveName) of the term whose liveness
	// record this term's took over, as that record named it when this
	// term's lease acquired it ("" when it named none: a record acquired
	// anew, broken by an operator, or written by an earlier version). That
	// term had stopped every shard by then: it released the record after
	// its shards returned, or its lease was judged expired by rule 2, after
	// its renew deadline (see assigner.dead). It stays true of the term
	// whatever happens to its records later.
	After string `json:"after,omitempty"`
	Nonce string `json:"nonce"`
}

// merge returns what a and b say together: the later term's, or, for one
// term, the latest Gen applied and whether it left; and the highest Gen
// either's process had seen. Every acknowledgement
// stays true of its term, so an older one (a restore) takes nothing away.
func (a ack) merge(b ack) ack {
	seen := max(a.Seen, b.Seen)
	switch {
	case a.Token > b.Token:
	case b.Token > a.Token:
		a = b
	default:
		a.Applied, a.Left, a.Restarting, a.Lease = max(a.Applied, b.Applied), a.Left || b.Left, a.Restarting || b.Restarting, max(a.Lease, b.Lease)
		a.After = cmp.Or(a.After, b.After)
	}
	a.Seen = seen
	return a
}

// ofLease reports whether a is the acknowledgement of the term whose
// liveness lease has token lease (an earlier version's names it by Token).
func (a ack) ofLease(lease uint64) bool {
	return a.Lease == lease || a.Lease == 0 && a.Token == lease
}

// termToken returns the token of a new term of a worker: its liveness
// lease's token, raised above floor (the highest term of the worker found
// in its acknowledgement and the assignment), in the high 32 bits, and 32
// random bits in the low. A term's token is unique for ever, whatever
// happens to the worker's records: a liveness record deleted gives the
// next process token 1 again, which the floor raises above the terms
// still known, and the random bits tell it from an earlier term with the
// same high bits should the floor have been lost too (its
// acknowledgement deleted or restored). Tokens of one worker still
// increase with its liveness tokens, and those of an earlier version
// (below 1<<32) are lower than every one of these. The raise stops at
// maxToken, which only a record put there reaches (decodeAck refuses a
// term above it), so that a term token stays one the decoders accept; the
// random bits then keep the terms apart.
func termToken(lease, floor uint64, random uint32) uint64 {
	high := max(lease, min(termHigh(floor)+1, maxToken))
	return high<<32 | uint64(random)
}

// maxToken is the largest lease token the shard objects can carry in the
// high 32 bits of a Gen or a term token: these stay below 2^63, the bound
// their decoders keep.
const maxToken = 1<<31 - 1

// checkTokenFits refuses a lease token above maxToken (which lease says
// which): shifted, it would make a Gen or term token the decoders refuse,
// halting the group, or, above 2^32, wrap below earlier ones. Tokens that
// high come only from a record put there (copied from another lease,
// restored from another system, written by a tool).
func checkTokenFits(which string, token uint64) error {
	if token > maxToken {
		return fmt.Errorf("shard: the %s lease's token %d exceeds %d, the largest a shard group can carry", which, token, maxToken)
	}
	return nil
}

// termHigh returns the high part of a term token: the liveness token of an
// earlier version's term, which was the token itself.
func termHigh(token uint64) uint64 {
	if token < 1<<32 {
		return token
	}
	return token >> 32
}

func (a ack) encode() []byte {
	a.Format, a.Nonce = 1, driver.NewNonce()
	b, _ := json.Marshal(a) // a struct of plain fields always marshals
	return b
}

// decodeAck parses what encode wrote. Anything else is lease.ErrCorrupt,
// and so is an acknowledgement that no term writes (rule 8: a copy from
// another group, a tool's write): a term token above the largest
// termToken makes, a liveness token above maxToken or above the term's
// high half (termToken raises it, never lowers it), or a Gen applied
// whose high half is above maxToken (no assigner writes one). Taken in,
// such a term would be the worker's latest, above the live one, and a
// worker that then named a term above it would go past the decoders'
// bounds.
func decodeAck(data []byte) (ack, error) {
	var a ack
	if err := json.Unmarshal(data, &a); err != nil || a.Format != 1 || a.Token == 0 {
		return ack{}, driver.Corruptf("shard: not a leasehold shard acknowledgement")
	}
	switch {
	case termHigh(a.Token) > maxToken:
		return ack{}, driver.Corruptf("shard: acknowledgement: token %d is above every term's (its high half exceeds %d)", a.Token, maxToken)
	case a.Lease > termHigh(a.Token):
		return ack{}, driver.Corruptf("shard: acknowledgement: lease %d is above the high half of its term's token %d", a.Lease, a.Token)
	case a.Applied>>32 > maxToken:
		return ack{}, driver.Corruptf("shard: acknowledgement: applied %d is above every Gen (its high half exceeds %d)", a.Applied, maxToken)
	case a.Seen>>32 > maxToken:
		return ack{}, driver.Corruptf("shard: acknowledgement: seen %d is above every Gen (its high half exceeds %d)", a.Seen, maxToken)
	}
	return a, nil
}

// leaseOf returns the liveness token of a's term as far as a says: Lease,
// or, for an acknowledgement that does not carry it (an earlier
// version's, whose term token was its liveness token), the term token's
// high half, which is at least the liveness token.
func (a ack) leaseOf() uint64 {
	if a.Lease != 0 {
		return a.Lease
	}
	return termHigh(a.Token)
}
