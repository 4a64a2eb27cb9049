package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/leasehold/leasehold/internal/ctxtime"
	"net/http"
	"runtime/debug"
	"sync"
	"time"

	"cirello.io/dynamolock/v2"
	ddb "github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/leasehold/leasehold/runner"
)

// The Go peer is cirello.io/dynamolock/v2, run in this process on the same
// dynalite as leasehold's dynalite figures: lease duration = the TTL,
// heartbeat period = leasehold's renew interval, and a follower that
// calls AcquireLock again whenever a call gives up. Its follower reads
// every refresh period, set to leasehold's follower's read interval (half
// a renew interval: the same follower request count); a lock whose record
// version number stayed unchanged for a lease duration since the call
// first read it is taken over.
//
// Two settings are measured. "defaults" keeps the library's
// AdditionalTimeToWaitForLock (1s, half the 2s TTL; scaled with it): a
// call gives up a lease duration plus that after it began, and the next
// call counts the lease duration afresh from its first read. "never gives
// up" sets it to an hour, so that one call keeps its count: the faster
// setting at the same request count.
const dynamolockModule = "cirello.io/dynamolock/v2"

// dynamolockSetting is one configuration of the Go peer.
type dynamolockSetting struct {
	name     string
	waitLong bool // AdditionalTimeToWaitForLock of an hour instead of TTL/2
}

var dynamolockSettings = []dynamolockSetting{{name: "defaults"}, {name: "never gives up", waitLong: true}}

// dlConfig is what every contender of one dynamolock measurement shares.
type dlConfig struct {
	table    string
	ttl      time.Duration
	endpoint string
	setting  dynamolockSetting
}

// dlStore is a contender's DynamoDB client as dynamolock sees it: it notes
// the Sent of the latest successful heartbeat (UpdateItem), and can crash
// the contender right after one, after which every call hangs until its
// context ends and sends nothing.
type dlStore struct {
	*ddb.Client

	mu       sync.Mutex
	lastSent time.Time
	armed    bool
	dead     bool
	crashed  chan struct{}
}

func (s *dlStore) isDead() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dead
}

func (s *dlStore) GetItem(ctx context.Context, in *ddb.GetItemInput, o ...func(*ddb.Options)) (*ddb.GetItemOutput, error) {
	if s.isDead() {
		return nil, hang(ctx)
	}
	return s.Client.GetItem(ctx, in, o...)
}

func (s *dlStore) PutItem(ctx context.Context, in *ddb.PutItemInput, o ...func(*ddb.Options)) (*ddb.PutItemOutput, error) {
	if s.isDead() {
		return nil, hang(ctx)
	}
	return s.Client.PutItem(ctx, in, o...)
}

func (s *dlStore) DeleteItem(ctx context.Context, in *ddb.DeleteItemInput, o ...func(*ddb.Options)) (*ddb.DeleteItemOutput, error) {
	if s.isDead() {
		return nil, hang(ctx)
	}
	return s.Client.DeleteItem(ctx, in, o...)
}

func (s *dlStore) UpdateItem(ctx context.Context, in *ddb.UpdateItemInput, o ...func(*ddb.Options)) (*ddb.UpdateItemOutput, error) {
	if s.isDead() {
		return nil, hang(ctx)
	}
	sent := time.Now()
	out, err := s.Client.UpdateItem(ctx, in, o...)
	if err == nil {
		s.mu.Lock()
		s.lastSent = sent
		if s.armed && !s.dead {
			s.dead = true
			close(s.crashed)
		}
		s.mu.Unlock()
	}
	return out, err
}

func (s *dlStore) armCrash() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.armed = true
}

func (s *dlStore) sent() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastSent
}

// dlContender is one dynamolock client campaigning for a lock.
type dlContender struct {
	store    *dlStore
	client   *dynamolock.Client
	cancel   context.CancelFunc
	done     chan struct{}
	acquired chan struct{}

	mu   sync.Mutex
	lock *dynamolock.Lock
	at   time.Time // when AcquireLock returned the lock
}

func startDL(ctx context.Context, c dlConfig, endpoint, lock string) (*dlContender, error) {
	st := &dlStore{Client: dynamoClient(endpoint), crashed: make(chan struct{})}
	client, err := dynamolock.New(st, c.table,
		dynamolock.WithPartitionKeyName("key"),
		dynamolock.WithLeaseDuration(c.ttl),
		dynamolock.WithHeartbeatPeriod(runner.DefaultRenewInterval(c.ttl)))
	if err != nil {
		return nil, err
	}
	wait := c.ttl / 2
	if c.setting.waitLong {
		wait = time.Hour
	}
	d := &dlContender{store: st, client: client, done: make(chan struct{}), acquired: make(chan struct{})}
	ctx, d.cancel = context.WithCancel(ctx)
	go func() {
		defer close(d.done)
		for ctx.Err() == nil {
			l, err := client.AcquireLockWithContext(ctx, lock,
				dynamolock.WithRefreshPeriod(runner.DefaultRenewInterval(c.ttl)/runner.DefaultFollowerReads),
				dynamolock.WithAdditionalTimeToWaitForLock(wait))
			if err == nil {
				d.mu.Lock()
				d.lock, d.at = l, time.Now()
				d.mu.Unlock()
				close(d.acquired)
				return
			}
			var timeout *dynamolock.LockNotGrantedError
			if !errors.As(err, &timeout) {
				ctxtime.Sleep(ctx, c.ttl/10) // a failed read: try again
			}
		}
	}()
	return d, nil
}

// release releases the lock held, and returns when it was called.
func (d *dlContender) release(ctx context.Context) (time.Time, error) {
	d.mu.Lock()
	l := d.lock
	d.mu.Unlock()
	began := time.Now()
	_, err := d.client.ReleaseLockWithContext(ctx, l)
	return began, err
}

func (d *dlContender) stop() {
	d.cancel()
	<-d.done
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = d.client.CloseWithContext(ctx) // a crashed one's calls hang until then
}

func (d *dlContender) acquiredAt() time.Time {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.at
}

// dlPair starts a holder, waits for its election, and starts a follower up
// to TTL/3 later, as for leasehold's pairs.
func dlPair(ctx context.Context, c dlConfig, kind, holderEndpoint, followerEndpoint string) (h, f *dlContender, err error) {
	lock := kind + "-" + randomHex(6)
	if h, err = startDL(ctx, c, holderEndpoint, lock); err != nil {
		return nil, nil, err
	}
	if err := waitFor(ctx, h.acquired, 3*c.ttl, "the holder's election"); err != nil {
		h.stop()
		return nil, nil, err
	}
	sleepRandom(ctx, c.ttl/3)
	if f, err = startDL(ctx, c, followerEndpoint, lock); err != nil {
		h.stop()
		return nil, nil, err
	}
	return h, f, nil
}

// dlFailoverTrial: the holder crashes right after a successful heartbeat
// (armed once the regime's wait is over); the time from that heartbeat's
// send to the follower's AcquireLock returning.
func dlFailoverTrial(ctx context.Context, c dlConfig, r regime) (time.Duration, error) {
	h, f, err := dlPair(ctx, c, "dl-failover", c.endpoint, c.endpoint)
	if err != nil {
		return 0, err
	}
	defer f.stop()
	defer h.stop()
	r.settle(ctx, c.ttl, runner.DefaultRenewInterval(c.ttl))
	h.store.armCrash()
	if err := waitFor(ctx, h.store.crashed, c.ttl, "a heartbeat to crash after"); err != nil {
		return 0, fmt.Errorf("%w: %v", errVoid, err)
	}
	select {
	case <-f.acquired:
		return 0, fmt.Errorf("%w: the follower took the lock before the holder's crash", errVoid)
	default:
	}
	if err := waitFor(ctx, f.acquired, 4*c.ttl, "the follower's takeover"); err != nil {
		return 0, err
	}
	return f.acquiredAt().Sub(h.store.sent()), nil
}

// dlHandoverTrial: after the warm-up the holder releases the lock; the
// time from the ReleaseLock call to the follower's AcquireLock returning.
func dlHandoverTrial(ctx context.Context, c dlConfig) (time.Duration, error) {
	h, f, err := dlPair(ctx, c, "dl-handover", c.endpoint, c.endpoint)
	if err != nil {
		return 0, err
	}
	defer f.stop()
	defer h.stop()
	warmUp(ctx, c.ttl)
	select {
	case <-f.acquired:
		return 0, fmt.Errorf("%w: the follower took the lock before the release", errVoid)
	default:
	}
	released, err := h.release(ctx)
	if err != nil {
		return 0, fmt.Errorf("%w: release: %v", errVoid, err)
	}
	if err := waitFor(ctx, f.acquired, 3*c.ttl, "the follower's election"); err != nil {
		return 0, err
	}
	return f.acquiredAt().Sub(released), nil
}

// dlRequestRates counts a holder's and a follower's requests, as
// countPeerRequests does.
func dlRequestRates(ctx context.Context, c dlConfig, label func(*http.Request) string, d time.Duration) (leader, follower map[string]float64, startReads int, err error) {
	var f *dlContender
	return countPeerRequests(ctx, c.endpoint, label, c.ttl, runner.DefaultRenewInterval(c.ttl), d,
		func(holder, follower string) (func(), error) {
			var h *dlContender
			var err error
			if h, f, err = dlPair(ctx, c, "dl-requests", holder, follower); err != nil {
				return nil, err
			}
			return func() { f.stop(); h.stop() }, nil
		},
		func() error {
			select {
			case <-f.acquired:
				return errors.New("the follower took the lock while the requests were counted")
			default:
				return nil
			}
		})
}

// dynamolockVersion is the module's version in this binary's build info.
func dynamolockVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range bi.Deps {
			if m.Path == dynamolockModule {
				return m.Version
			}
		}
	}
	return "(version unknown)"
}
