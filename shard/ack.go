package shard

import (
	"encoding/json"

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
	Restarting bool   `json:"restarting,omitempty"`
	Nonce      string `json:"nonce"`
}

// merge returns what a and b say together: the later term's, or, for one
// term, the latest Gen applied and whether it left. Every acknowledgement
// stays true of its term, so an older one (a restore) takes nothing away.
func (a ack) merge(b ack) ack {
	switch {
	case a.Token > b.Token:
		return a
	case b.Token > a.Token:
		return b
	}
	a.Applied, a.Left, a.Restarting = max(a.Applied, b.Applied), a.Left || b.Left, a.Restarting || b.Restarting
	return a
}

func (a ack) encode() []byte {
	a.Format, a.Nonce = 1, driver.NewNonce()
	b, _ := json.Marshal(a) // a struct of plain fields always marshals
	return b
}

func decodeAck(data []byte) (ack, error) {
	var a ack
	if err := json.Unmarshal(data, &a); err != nil || a.Format != 1 || a.Token == 0 {
		return ack{}, driver.Corruptf("shard: not a leasehold shard acknowledgement")
	}
	return a, nil
}
