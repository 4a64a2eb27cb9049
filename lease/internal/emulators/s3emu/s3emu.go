// Package s3emu opens the S3-compatible stores that s3lease's
// integration tests and the quorum's mixed conformance suites run on: MinIO
// and moto from the local test stack, and a real account's when one is
// configured (see package emulators). Import it from _test.go files only.
package s3emu

import (
	"bytes"
	"context"
	"errors"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/internal/awstest"
	"github.com/leasehold/leasehold/lease/internal/emulators"
	"github.com/leasehold/leasehold/lease/internal/storetest"
	"github.com/leasehold/leasehold/lease/s3lease"
)

// Store is one S3-compatible store under test, with a bucket for one test.
type Store struct {
	// Name names the store in test names and messages ("minio", "moto").
	Name string
	// Bucket is this test's bucket on the store.
	Bucket string
	// PathStyle: the store is reached with path-style URLs.
	PathStyle bool
	// NewClient returns a client of the store; hc, if not nil, carries its
	// requests.
	NewClient func(hc s3.HTTPClient) *s3.Client
	// WithKeys, if not nil, returns a client of the store that signs with
	// other keys; AccessKey is the store's real access key ID.
	WithKeys  func(accessKey, secret string) *s3.Client
	AccessKey string
	// Endpoint is an emulator's address (empty for a real account's
	// store). Secret, with AccessKey, MinIO's keys, signs for it through
	// another address (a fault proxy).
	Endpoint, Secret string
	// CallTimeout is the CallTimeout the conformance suite's leases get.
	CallTimeout time.Duration
	// TTL is the conformance suite's TTL: storetest.ConformanceTTL if zero.
	TTL time.Duration
	// Elsewhere, if not nil, returns a client of the same store through
	// another address of its endpoint (localhost for 127.0.0.1): a store
	// whose check this process has not made yet, as another process's.
	Elsewhere func(hc s3.HTTPClient) *s3.Client

	mu   sync.Mutex
	keys map[string]bool // the keys this test wrote
}

// MinIO returns MinIO from the local test stack (LEASEHOLD_MINIO_ENDPOINT,
// LEASEHOLD_MINIO_ACCESS_KEY, LEASEHOLD_MINIO_SECRET_KEY) with a bucket of
// the test's own, or skips the test naming the variable.
func MinIO(t *testing.T) *Store {
	t.Helper()
	endpoint := emulators.Endpoint(t, "MinIO", "minio", "LEASEHOLD_MINIO_ENDPOINT")
	key, secret := os.Getenv("LEASEHOLD_MINIO_ACCESS_KEY"), os.Getenv("LEASEHOLD_MINIO_SECRET_KEY")
	tg := &Store{Name: "minio", PathStyle: true, CallTimeout: time.Second, NewClient: StaticClient(endpoint, key, secret), AccessKey: key, Endpoint: endpoint, Secret: secret,
		WithKeys:  func(key, secret string) *s3.Client { return StaticClient(endpoint, key, secret)(nil) },
		Elsewhere: StaticClient(strings.Replace(endpoint, "127.0.0.1", "localhost", 1), key, secret)}
	tg.ensureBucket(t)
	return tg
}

// Moto returns moto's S3 from the local test stack
// (LEASEHOLD_MOTO_ENDPOINT) with a bucket of the test's own, or skips the
// test naming the variable.
func Moto(t *testing.T) *Store {
	t.Helper()
	endpoint := emulators.Endpoint(t, "moto", "moto", "LEASEHOLD_MOTO_ENDPOINT")
	build := StaticClient(endpoint, "test", "test")
	// moto is one Python process: under the conformance suite's burst of
	// parallel requests on a 2-core machine, with the race detector, some
	// of its answers take more than 500ms.
	tg := &Store{Name: "moto", PathStyle: true, CallTimeout: time.Second, TTL: storetest.MotoTTL, Endpoint: endpoint, NewClient: func(hc s3.HTTPClient) *s3.Client {
		return build(&retryMotoGetRace{next: hc})
	}, Elsewhere: func(hc s3.HTTPClient) *s3.Client {
		return StaticClient(endpoint, "elsewhere", "test")(&retryMotoGetRace{next: hc})
	}}
	tg.ensureBucket(t)
	return tg
}

// Targets returns the stores s3lease's integration tests run against:
// MinIO and moto, whose subtests skip, naming the variable, when it is not
// set; and "aws" when AWS_ENDPOINT_URL_S3 (LocalStack) or
// LEASEHOLD_S3_BUCKET (a bucket in a real account, used as it is) is set,
// with credentials and region from the default AWS chain. "aws" is left
// out, not skipped, otherwise, as nothing on this machine provides it.
func Targets() storetest.Targets[*Store] {
	targets := storetest.Targets[*Store]{Specs: []storetest.Spec[*Store]{{Name: "minio", Setup: MinIO}, {Name: "moto", Setup: Moto}}}
	if os.Getenv("AWS_ENDPOINT_URL_S3") == "" && os.Getenv("LEASEHOLD_S3_BUCKET") == "" {
		return targets
	}
	targets.Specs = append(targets.Specs, storetest.Spec[*Store]{Name: "aws", Setup: func(t *testing.T) *Store {
		cfg, err := config.LoadDefaultConfig(context.Background())
		if err != nil {
			t.Fatalf("loading the default AWS config for AWS_ENDPOINT_URL_S3 / LEASEHOLD_S3_BUCKET: %v", err)
		}
		pathStyle := os.Getenv("AWS_ENDPOINT_URL_S3") != ""
		tg := &Store{Name: "aws", CallTimeout: time.Second, Bucket: os.Getenv("LEASEHOLD_S3_BUCKET"), PathStyle: pathStyle,
			NewClient: func(hc s3.HTTPClient) *s3.Client {
				return s3.NewFromConfig(cfg, func(o *s3.Options) {
					o.UsePathStyle = pathStyle
					if hc != nil {
						o.HTTPClient = hc
					}
				})
			}}
		tg.ensureBucket(t)
		return tg
	}})
	return targets
}

// StaticClient returns a client builder for an endpoint and fixed keys,
// isolated from the AWS_* environment.
func StaticClient(endpoint, key, secret string) func(hc s3.HTTPClient) *s3.Client {
	return func(hc s3.HTTPClient) *s3.Client {
		return s3.NewFromConfig(awstest.StaticConfig(endpoint, key, secret, hc), func(o *s3.Options) { o.UsePathStyle = true })
	}
}

// ensureBucket creates a bucket for this test unless the target names one,
// and removes what the test stored when it ends: the whole bucket it
// created, or in a bucket it was given (LEASEHOLD_S3_BUCKET), only the keys
// this test wrote, so that other runs sharing the bucket are left alone.
func (tg *Store) ensureBucket(t *testing.T) {
	t.Helper()
	c := tg.NewClient(nil)
	tg.keys = map[string]bool{}
	if tg.Bucket != "" {
		t.Cleanup(func() { tg.deleteObjects(t, c, tg.writtenKeys()) })
		return
	}
	tg.Bucket = storetest.UniqueName("leasehold-test")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: &tg.Bucket}); err != nil {
		t.Fatalf("%s: CreateBucket %q: %v", tg.Name, tg.Bucket, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		var keys []string
		p := s3.NewListObjectsV2Paginator(c, &s3.ListObjectsV2Input{Bucket: &tg.Bucket})
		for p.HasMorePages() {
			page, err := p.NextPage(ctx)
			if err != nil {
				t.Logf("%s: cleanup: ListObjectsV2 %q: %v", tg.Name, tg.Bucket, err)
				return
			}
			for _, o := range page.Contents {
				keys = append(keys, aws.ToString(o.Key))
			}
		}
		tg.deleteObjects(t, c, keys)
		if _, err := c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: &tg.Bucket}); err != nil {
			t.Logf("%s: cleanup: DeleteBucket %q: %v", tg.Name, tg.Bucket, err)
		}
	})
}

func (tg *Store) deleteObjects(t *testing.T, c *s3.Client, keys []string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, key := range keys {
		if _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &tg.Bucket, Key: &key}); err != nil {
			t.Logf("%s: cleanup: DeleteObject %q: %v", tg.Name, key, err)
		}
	}
}

// Track notes that the test writes key, or a lease at key and, with it,
// its probe object (s3lease.ProbeSuffix).
func (tg *Store) Track(key string) {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	tg.keys[key] = true
	tg.keys[key+s3lease.ProbeSuffix] = true
}

func (tg *Store) writtenKeys() []string {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	return slices.Sorted(maps.Keys(tg.keys))
}

// Open opens the lease at key on the target, through the given client.
func (tg *Store) Open(t *testing.T, c *s3.Client, key string, opts lease.Options) lease.Lease {
	t.Helper()
	tg.Track(key)
	l, err := s3lease.Open(t.Context(), s3lease.Options{Bucket: tg.Bucket, Key: key, Client: c, UsePathStyle: tg.PathStyle}, opts)
	if err != nil {
		t.Fatalf("%s: s3lease.Open(%q): %v", tg.Name, key, err)
	}
	return l
}

// URL returns the s3:// URL of the lease at key on an emulator, its
// endpoint in the URL; lease.Open signs its requests with the keys of
// the AWS_* environment.
func (tg *Store) URL(key string) string {
	tg.Track(key)
	return "s3://" + tg.Bucket + "/" + key + "?region=" + awstest.Region + "&endpoint=" + url.QueryEscape(tg.Endpoint) + "&use_path_style=true"
}

// Put stores body at key unconditionally, as someone other than leasehold
// would, and returns the ETag.
func (tg *Store) Put(ctx context.Context, c *s3.Client, key string, body []byte) (string, error) {
	tg.Track(key)
	out, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: &tg.Bucket, Key: &key, Body: bytes.NewReader(body)})
	if err != nil {
		return "", err
	}
	return aws.ToString(out.ETag), nil
}

// Get returns the object at key as stored, with its ETag and content type.
func (tg *Store) Get(t *testing.T, c *s3.Client, key string) (body []byte, etag, contentType string) {
	t.Helper()
	out, err := c.GetObject(t.Context(), &s3.GetObjectInput{Bucket: &tg.Bucket, Key: &key})
	if err != nil {
		var nsk *types.NoSuchKey
		if errors.As(err, &nsk) {
			t.Fatalf("%s: GetObject %q: no such key", tg.Name, key)
		}
		t.Fatalf("%s: GetObject %q: %v", tg.Name, key, err)
	}
	defer out.Body.Close()
	body, err = io.ReadAll(out.Body)
	if err != nil {
		t.Fatalf("%s: reading %q: %v", tg.Name, key, err)
	}
	return body, aws.ToString(out.ETag), aws.ToString(out.ContentType)
}

// Conformance is the conformance suite's harness on the target, through
// one new client.
func (tg *Store) Conformance() *storetest.Harness {
	c := tg.NewClient(nil)
	return tg.Harness(c, c)
}

// Harness is the conformance suite's harness on the target: leases opened
// through c, foreign objects written and records deleted through direct.
func (tg *Store) Harness(c, direct *s3.Client) *storetest.Harness {
	return &storetest.Harness{
		CallTimeout: tg.CallTimeout,
		TTL:         tg.TTL,
		OpenLease: func(ctx context.Context, key string, opts lease.Options) (lease.Lease, error) {
			tg.Track(key)
			return s3lease.Open(ctx, s3lease.Options{Bucket: tg.Bucket, Key: key, Client: c, UsePathStyle: tg.PathStyle}, opts)
		},
		// An object that is JSON, but not a lease record.
		Foreign: func(ctx context.Context, key string) error {
			_, err := tg.Put(ctx, direct, key, []byte(`{"owner":"another-tool","locked":true}`))
			return err
		},
		Remove: func(ctx context.Context, key string) error {
			_, err := direct.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &tg.Bucket, Key: &key})
			return err
		},
	}
}

// retryMotoGetRace works around a race in moto 5.2.1's server: a GetObject
// that runs while a PutObject overwrites the same key may read the old
// value's buffer after the put closed it, and moto answers 500 with an HTML
// page ("ValueError: I/O operation on closed file" in its log). Amazon S3,
// MinIO and LocalStack do not do this. The driver rightly reports such a 500
// as lease.ErrUnavailable, but the conformance suite races contenders on one
// key and wants only ErrHeld, so for moto only, a GET answered with 500 is
// sent again, up to twice: a GET changes nothing, so repeating it is safe.
type retryMotoGetRace struct {
	next s3.HTTPClient
}

func (r *retryMotoGetRace) Do(req *http.Request) (*http.Response, error) {
	next := r.next
	if next == nil {
		next = http.DefaultClient
	}
	for attempt := 0; ; attempt++ {
		resp, err := next.Do(req)
		if err != nil || req.Method != http.MethodGet || resp.StatusCode != http.StatusInternalServerError || attempt == 2 {
			return resp, err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}
