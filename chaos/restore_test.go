//go:build chaos

package chaos_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	ddb "github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
	"google.golang.org/api/googleapi"
	storage "google.golang.org/api/storage/v1"

	"github.com/leasehold/leasehold/chaos"
	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
)

// TestChaosRestore runs runner contenders on every CAS store of the stack
// (MinIO, moto, dynalite, the GCS emulator; not Azurite: Azure's native
// lease is judged by the store, whose lease state no object restore puts
// back), each behind a toxiproxy proxy of its own, and injects one fault
// only, restore, for the chaos duration (LEASEHOLD_CHAOS_DURATION, 90s by
// default), with quiet spells of one to two TTLs between restores:
//
//   - all along, the test reads the stored lease object straight at the
//     store (not through the proxies) every TTL/16, and keeps every
//     distinct write of the current term (holder and token) it sees: the
//     object's bytes on S3 and Cloud Storage, the item on DynamoDB;
//   - once the holder has renewed at least once, it disables every
//     follower's proxy (toxiproxy closes their connections and refuses
//     new ones: their reads fail), waits 0.1 to 1 TTL, reads the object
//     again and, if it is still of that term and held, puts an earlier
//     write of the term back over it with a conditional write on the
//     version it just read (S3 If-Match, DynamoDB a condition on the
//     nonce, Cloud Storage ifGenerationMatch): the latest earlier write
//     half the time, any earlier one otherwise. On S3 the bytes, and so
//     the ETag, are the earlier write's own; a Cloud Storage restore makes
//     a new generation of the earlier bytes;
//   - it waits 0.1 to 1 TTL more and enables the followers' proxies.
//
// A follower cut off for as little as 0.2 TTL may have sent no read while
// cut off: if the write put back is the one it read last (on S3 and
// DynamoDB its version comes back with it; a Cloud Storage restore is a new
// generation), its count goes on unbroken, the case of safety rule 3 (a
// count started up to one renew interval before the holder's latest
// write). The holder finds its record gone back at its next renewal and
// steps down; the followers take over after a TTL. The
// checker must find no overlap. The run logs how many restores it did and
// how many it gave up (the term ended, or no earlier write was seen), and
// fails when a run of a minute or more did none.
//
// Only writes of the current term are put back, never one of another term
// or a released one: putting back a record of an earlier term, or a
// release, over a live holder's record can let a follower take over while
// that holder still leads, for up to a renew interval, with any design
// that judges the lease from the object alone: nothing in the object
// tells the follower the holder is alive. Contenders run the runner
// (chaos/contender), not leasehold run: the restore is judged by the
// lease, beneath both.
func TestChaosRestore(t *testing.T) {
	t.Parallel()
	tp, bins, duration := setup(t)
	for _, b := range backends {
		if b.storeJudged {
			continue
		}
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			value := os.Getenv(b.variable)
			if value == "" {
				t.Skipf("chaos: %s is not configured: set %s (scripts/stack up; eval \"$(scripts/stack env)\")", b.name, b.variable)
			}
			upstream, contender, raw := b.prepare(t, value)
			c := newChaos(t, tp, bins, runnerMode, b, upstream, contender, 0)
			c.watchStore(raw)
			c.run(duration, []faultKind{restoreTerm})
			res := c.check()
			t.Logf("runner contenders on %s, TTL %v, %v: restores %d (the latest earlier write %d), given up %d:\n%s",
				b.name, b.ttl, duration, c.restores.done, c.restores.latest, c.restores.givenUp, res.Summary(c.faults))
			verdict(t, b.name, "leaders' records", c.dir, res.Safe(), res.OK())
			if duration >= time.Minute && c.restores.done == 0 {
				t.Errorf("%s: no restore in %v: the fault was never injected, so the run proves nothing", b.name, duration)
			}
		})
	}
}

// restoreFigures count the restore faults of a run.
type restoreFigures struct {
	done    int // earlier writes put back
	latest  int // of which the latest write before the one replaced
	givenUp int // no earlier write of the current term to put back
}

// restore cuts every follower off, puts an earlier write of the holder's
// current term back, straight at the store, and lets the followers back
// (see TestChaosRestore).
func (c *chaosRun) restore() {
	c.t.Helper()
	if c.store == nil {
		c.t.Fatalf("%s: the restore fault needs watchStore", c.b.name)
	}
	// The holder has renewed at least once: a write of its term to put back.
	var cur stored
	for deadline := time.Now().Add(3 * c.b.ttl); ; time.Sleep(c.b.ttl / 16) {
		var ok bool
		if cur, ok = c.store.latest(); ok && cur.rec.Held() && len(c.store.earlier(cur)) > 0 {
			break
		}
		if time.Now().After(deadline) {
			c.restores.givenUp++
			c.t.Logf("%s: restore given up: no earlier write of a held term seen within %v", c.b.name, 3*c.b.ttl)
			return
		}
	}
	var followers []*slot
	for _, s := range c.slots {
		if s.id != cur.rec.Holder {
			followers = append(followers, s)
		}
	}
	f := chaos.Fault{Kind: string(restoreTerm), Target: cur.rec.Holder, Start: monotonic()}
	for _, s := range followers {
		if err := c.tp.enable(s.proxy, false); err != nil {
			c.t.Fatalf("%s: cutting %s off: %v", c.b.name, s.id, err)
		}
	}
	time.Sleep(c.between(0.1, 1))
	if why := c.putBack(cur); why != "" {
		f.Kind = string(partitionFollower) + "s" // what it was
		c.restores.givenUp++
		c.t.Logf("%s: restore given up, the followers only cut off: %s", c.b.name, why)
	}
	time.Sleep(c.between(0.1, 1))
	for _, s := range followers {
		if err := c.tp.enable(s.proxy, true); err != nil {
			c.t.Fatalf("%s: letting %s back: %v", c.b.name, s.id, err)
		}
	}
	f.End = monotonic()
	c.faults = append(c.faults, f)
}

// putBack puts an earlier write of term's holder and token back over the
// object, if it is still of that term and held, or says why it did not.
func (c *chaosRun) putBack(term stored) (why string) {
	c.t.Helper()
	ctx := c.t.Context()
	for range 3 { // the holder may renew between the read and the write
		now, err := c.store.raw.get(ctx)
		if err != nil {
			c.t.Errorf("%s: reading the lease object for a restore: %v", c.b.name, err)
			return "the object could not be read"
		}
		c.store.note(now)
		if !now.sameTerm(term) || !now.rec.Held() {
			return fmt.Sprintf("the term of %s, token %d, ended (now %s, token %d, released %t)",
				term.rec.Holder, term.rec.Token, now.rec.Holder, now.rec.Token, now.rec.Released)
		}
		earlier := c.store.earlier(now)
		if len(earlier) == 0 {
			return "no earlier write of the term"
		}
		back, latest := earlier[len(earlier)-1], true
		if c.rng.IntN(2) == 0 {
			i := c.rng.IntN(len(earlier))
			back, latest = earlier[i], i == len(earlier)-1
		}
		switch err := c.store.raw.put(ctx, back, now); {
		case err == nil:
			c.restores.done++
			if latest {
				c.restores.latest++
			}
			return ""
		case !errors.Is(err, errChanged):
			c.t.Errorf("%s: putting an earlier write back: %v", c.b.name, err)
			return "the write failed"
		}
	}
	return "the holder wrote between every read and write"
}

// watchStore reads the lease object straight at the store every TTL/16
// until the test ends, for the restore fault.
func (c *chaosRun) watchStore(raw rawStore) {
	if raw == nil {
		c.t.Fatalf("%s: no raw access to the store: it has no restore fault", c.b.name)
	}
	w := &storeWatch{raw: raw}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(c.b.ttl / 16)
		defer tick.Stop()
		for {
			rctx, rcancel := context.WithTimeout(ctx, c.b.ttl)
			if s, err := raw.get(rctx); err == nil {
				w.note(s)
			}
			rcancel()
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	c.t.Cleanup(func() { cancel(); <-done })
	c.store = w
}

// storeWatch keeps the distinct writes of the lease's current term, read
// straight at the store.
type storeWatch struct {
	raw  rawStore
	mu   sync.Mutex
	term []stored // in the order first seen; the last is the latest read
}

// maxTermWrites bounds the writes of a term a storeWatch keeps.
const maxTermWrites = 64

// note adds s, read just now, to the term's writes, or starts a new term.
func (w *storeWatch) note(s stored) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.term) > 0 && !w.term[0].sameTerm(s) {
		w.term = nil
	}
	w.term = slices.DeleteFunc(w.term, func(o stored) bool { return o.write == s.write })
	w.term = append(w.term, s)
	if len(w.term) > maxTermWrites {
		w.term = slices.Delete(w.term, 0, len(w.term)-maxTermWrites)
	}
}

// latest returns the write read last, if any.
func (w *storeWatch) latest() (stored, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.term) == 0 {
		return stored{}, false
	}
	return w.term[len(w.term)-1], true
}

// earlier returns the held writes of cur's term other than cur, oldest
// first: those a restore may put back over cur.
func (w *storeWatch) earlier(cur stored) []stored {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []stored
	for _, s := range w.term {
		if s.sameTerm(cur) && s.write != cur.write && s.rec.Held() {
			out = append(out, s)
		}
	}
	return out
}

// rawStore is the lease object straight at its store, bypassing leasehold
// and the proxies: what a restore from a backup reads and writes.
type rawStore interface {
	// get reads the object as stored.
	get(ctx context.Context) (stored, error)
	// put writes s's body back over cur, if the object is still at cur's
	// version; if it is not, it returns an error wrapping errChanged.
	put(ctx context.Context, s, cur stored) error
}

// errChanged: the object was written since it was read.
var errChanged = errors.New("the lease object changed since it was read")

// stored is the lease object as the store keeps it.
type stored struct {
	body    any    // what put writes back: the object's bytes, or the DynamoDB item
	write   string // the write that stored it: the bytes, or the item's nonce (unique to each write)
	version string // the store's version of it: the ETag, the generation, the item's nonce
	rec     lease.Record
}

func (s stored) sameTerm(o stored) bool {
	return s.rec.Holder == o.rec.Holder && s.rec.Token == o.rec.Token
}

// storedBytes decodes the bytes of an object written by an S3 or Cloud
// Storage lease.
func storedBytes(b []byte, version string) (stored, error) {
	r, err := driver.DecodeJSON(b)
	if err != nil {
		return stored{}, err
	}
	return stored{body: b, write: string(b), version: version, rec: r}, nil
}

// s3Object is the lease object in an S3 bucket.
type s3Object struct {
	c           *s3.Client
	bucket, key string
}

func (o s3Object) get(ctx context.Context) (stored, error) {
	out, err := o.c.GetObject(ctx, &s3.GetObjectInput{Bucket: &o.bucket, Key: &o.key})
	if err != nil {
		return stored{}, err
	}
	defer out.Body.Close()
	b, err := io.ReadAll(out.Body)
	if err != nil {
		return stored{}, err
	}
	return storedBytes(b, aws.ToString(out.ETag))
}

func (o s3Object) put(ctx context.Context, s, cur stored) error {
	_, err := o.c.PutObject(ctx, &s3.PutObjectInput{Bucket: &o.bucket, Key: &o.key, Body: bytes.NewReader(s.body.([]byte)),
		ContentType: aws.String("application/json"), IfMatch: aws.String(cur.version)})
	if apiErr, ok := errors.AsType[smithy.APIError](err); ok && apiErr.ErrorCode() == "PreconditionFailed" {
		return fmt.Errorf("%w: %v", errChanged, err)
	}
	return err
}

// dynamoItem is the lease item in a DynamoDB table.
type dynamoItem struct {
	c     *ddb.Client
	table string
	key   map[string]types.AttributeValue
}

func (d dynamoItem) get(ctx context.Context) (stored, error) {
	out, err := d.c.GetItem(ctx, &ddb.GetItemInput{TableName: &d.table, Key: d.key, ConsistentRead: aws.Bool(true)})
	if err != nil {
		return stored{}, err
	}
	holder, _ := out.Item["holder"].(*types.AttributeValueMemberS)
	token, _ := out.Item["token"].(*types.AttributeValueMemberN)
	released, _ := out.Item["released"].(*types.AttributeValueMemberBOOL)
	ttl, _ := out.Item["ttl_ms"].(*types.AttributeValueMemberN)
	nonce, _ := out.Item["nonce"].(*types.AttributeValueMemberS)
	if holder == nil || token == nil || released == nil || ttl == nil || nonce == nil {
		return stored{}, fmt.Errorf("the lease item is not a record: %v", out.Item)
	}
	r := lease.Record{Holder: holder.Value, Released: released.Value}
	var err1, err2 error
	r.Token, err1 = strconv.ParseUint(token.Value, 10, 64)
	ms, err2 := strconv.ParseInt(ttl.Value, 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return stored{}, fmt.Errorf("the lease item is not a record: %v", err)
	}
	r.TTL = time.Duration(ms) * time.Millisecond
	return stored{body: out.Item, write: nonce.Value, version: nonce.Value, rec: r}, nil
}

func (d dynamoItem) put(ctx context.Context, s, cur stored) error {
	_, err := d.c.PutItem(ctx, &ddb.PutItemInput{TableName: &d.table, Item: s.body.(map[string]types.AttributeValue),
		ConditionExpression:       aws.String("#version = :version"),
		ExpressionAttributeNames:  map[string]string{"#version": "nonce"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":version": &types.AttributeValueMemberS{Value: cur.version}}})
	if _, ok := errors.AsType[*types.ConditionalCheckFailedException](err); ok {
		return fmt.Errorf("%w: %v", errChanged, err)
	}
	return err
}

// gcsObject is the lease object in a Cloud Storage bucket.
type gcsObject struct {
	c              *storage.Service
	bucket, object string
}

func (o gcsObject) get(ctx context.Context) (stored, error) {
	resp, err := o.c.Objects.Get(o.bucket, o.object).Context(ctx).Download()
	if err != nil {
		return stored{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return stored{}, err
	}
	return storedBytes(b, resp.Header.Get("X-Goog-Generation"))
}

func (o gcsObject) put(ctx context.Context, s, cur stored) error {
	gen, err := strconv.ParseInt(cur.version, 10, 64)
	if err != nil {
		return err
	}
	_, err = o.c.Objects.Insert(o.bucket, &storage.Object{Name: o.object, ContentType: "application/json"}).IfGenerationMatch(gen).
		Media(bytes.NewReader(s.body.([]byte)), googleapi.ContentType("application/json"), googleapi.ChunkSize(0)).Context(ctx).Do()
	if apiErr, ok := errors.AsType[*googleapi.Error](err); ok && apiErr.Code == http.StatusPreconditionFailed {
		return fmt.Errorf("%w: %v", errChanged, err)
	}
	return err
}
