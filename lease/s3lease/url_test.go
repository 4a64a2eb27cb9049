package s3lease_test

import (
	"errors"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
	"github.com/leasehold/leasehold/lease/internal/awstest"
	"github.com/leasehold/leasehold/lease/internal/emulators/s3emu"
	"github.com/leasehold/leasehold/lease/internal/storetest"
	"github.com/leasehold/leasehold/lease/s3lease"
)

// TestOpenURL opens s3:// URLs against MinIO, with the endpoint in the URL
// and from AWS_ENDPOINT_URL_S3, and uses the lease.
func TestOpenURL(t *testing.T) {
	tg := targets.First(t) // minio
	endpoint := os.Getenv("LEASEHOLD_MINIO_ENDPOINT")
	awstest.IsolateEnv(t)
	t.Setenv("AWS_ACCESS_KEY_ID", os.Getenv("LEASEHOLD_MINIO_ACCESS_KEY"))
	t.Setenv("AWS_SECRET_ACCESS_KEY", os.Getenv("LEASEHOLD_MINIO_SECRET_KEY"))

	use := func(t *testing.T, urlstr, key string) {
		t.Helper()
		tg.Track(key)
		storetest.UseURL(t, urlstr, testTTL, func(term lease.Term) {
			body, etag, _ := tg.Get(t, tg.NewClient(nil), key)
			if r, err := driver.DecodeJSON(body); err != nil || r.Holder != "worker-1" || etag != term.Version {
				t.Errorf("object at %s is %s (ETag %s), want worker-1's record at ETag %s", key, body, etag, term.Version)
			}
		})
	}
	t.Run("EndpointInURL", func(t *testing.T) {
		key := "s3lease-url/" + storetest.UniqueName("endpoint")
		use(t, tg.URL(key), key)
	})
	t.Run("EndpointFromEnv", func(t *testing.T) {
		t.Setenv("AWS_ENDPOINT_URL_S3", endpoint)
		t.Setenv("AWS_REGION", "us-east-1")
		key := "s3lease-url/" + storetest.UniqueName("env")
		use(t, "s3://"+tg.Bucket+"/"+key+"?use_path_style=true", key)
	})
	t.Run("OpenWithoutClient", func(t *testing.T) {
		// s3lease.Open builds its client from the default chain.
		t.Setenv("AWS_ENDPOINT_URL", endpoint)
		t.Setenv("AWS_REGION", "us-east-1")
		key := "s3lease-url/" + storetest.UniqueName("default-chain")
		tg.Track(key)
		l, err := s3lease.Open(t.Context(), s3lease.Options{Bucket: tg.Bucket, Key: key, UsePathStyle: true}, lease.Options{Identity: "worker-1", TTL: testTTL})
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		if _, err := l.Acquire(t.Context()); err != nil {
			t.Fatalf("Acquire: %v", err)
		}
	})
}

// TestOpenErrors: bad URLs and options are lease.ErrInvalid, naming the
// field or parameter at fault, before any request is sent.
func TestOpenErrors(t *testing.T) {
	awstest.IsolateEnv(t)
	t.Setenv("AWS_REGION", "us-east-1")
	opts := lease.Options{Identity: "worker-1"}
	storetest.RefuseURLs(t, "s3lease", []storetest.BadURL{
		{Name: "UnknownParam", URL: "s3://bucket/key?region=us-east-1&bogus=1&prefix=x", Mention: "unknown query parameter(s) bogus, prefix"},
		{Name: "RateLimiterCapacity", URL: "s3://bucket/key?rate_limiter_capacity=10", Mention: "unknown query parameter(s) rate_limiter_capacity"},
		{Name: "AWSSDK", URL: "s3://bucket/key?awssdk=v2", Mention: "unknown query parameter(s) awssdk"},
		{Name: "RepeatedParam", URL: "s3://bucket/key?region=us-east-1&region=eu-west-1", Mention: "repeats query parameter(s) region"},
		{Name: "MissingKey", URL: "s3://bucket", Mention: "names no key"},
		{Name: "MissingKeySlash", URL: "s3://bucket/", Mention: "names no key"},
		{Name: "MissingBucket", URL: "s3:///key", Mention: "names no bucket"},
		{Name: "Port", URL: "s3://127.0.0.1:9000/bucket/key", Mention: "has a port"},
		{Name: "Credentials", URL: "s3://AKIA:secret@bucket/key", Mention: "carries credentials"},
		{Name: "BadPathStyle", URL: "s3://bucket/key?use_path_style=maybe", Mention: `use_path_style="maybe"`},
		{Name: "BadBool", URL: "s3://bucket/key?hostname_immutable=maybe", Mention: "invalid value for hostname_immutable"},
		{Name: "BadRole", URL: "s3://bucket/key?role=admin", Mention: "invalid value for role"},
		{Name: "UnknownProfile", URL: "s3://bucket/key?profile=leasehold-no-such-profile", Mention: "leasehold-no-such-profile"},
	})

	t.Run("OpenerWithClient", func(t *testing.T) {
		o := &s3lease.URLOpener{Client: s3emu.StaticClient("http://127.0.0.1:1", "test", "test")(nil)}
		u, _ := url.Parse("s3://bucket/key?use_path_style=true&region=eu-west-1")
		_, err := o.OpenLeaseURL(t.Context(), u, lease.Options{Identity: "worker-1"})
		t.Logf("%v", err)
		if !errors.Is(err, lease.ErrInvalid) || !strings.Contains(err.Error(), "query parameter(s) region") {
			t.Errorf("OpenLeaseURL with a Client and ?region: %v, want lease.ErrInvalid naming region", err)
		}
		u, _ = url.Parse("s3://bucket/key?use_path_style=true")
		if _, err := o.OpenLeaseURL(t.Context(), u, lease.Options{Identity: "worker-1"}); err != nil {
			t.Errorf("OpenLeaseURL with a Client and ?use_path_style: %v, want a lease", err)
		}
	})

	client := s3emu.StaticClient("http://127.0.0.1:1", "test", "test")(nil)
	for _, row := range []struct {
		name    string
		opts    s3lease.Options
		mention string
	}{
		{"EmptyBucket", s3lease.Options{Key: "k", Client: client}, `s3lease: Bucket ("") must not be empty`},
		{"EmptyKey", s3lease.Options{Bucket: "b", Client: client}, `s3lease: Key ("") must not be empty`},
		{"LongKey", s3lease.Options{Bucket: "b", Key: strings.Repeat("k", 1025), Client: client}, "is 1025 bytes long; at most 1008 are allowed"},
	} {
		t.Run(row.name, func(t *testing.T) {
			_, err := s3lease.Open(t.Context(), row.opts, opts)
			t.Logf("%v", err)
			if !errors.Is(err, lease.ErrInvalid) || !strings.Contains(err.Error(), row.mention) {
				t.Errorf("Open: %v, want lease.ErrInvalid mentioning %q", err, row.mention)
			}
		})
	}
	t.Run("NoRegion", func(t *testing.T) {
		t.Setenv("AWS_REGION", "")
		_, err := lease.Open(t.Context(), "s3://bucket/key", opts)
		t.Logf("%v", err)
		if !errors.Is(err, lease.ErrInvalid) || !strings.Contains(err.Error(), "s3lease: region") {
			t.Errorf("lease.Open without a region: %v, want lease.ErrInvalid naming the region", err)
		}
	})
	t.Run("InvalidLeaseOptions", func(t *testing.T) {
		_, err := s3lease.Open(t.Context(), s3lease.Options{Bucket: "b", Key: "k", Client: client}, lease.Options{})
		t.Logf("%v", err)
		if !errors.Is(err, lease.ErrInvalid) || !strings.Contains(err.Error(), "Identity") {
			t.Errorf("Open with no identity: %v, want lease.ErrInvalid naming Identity", err)
		}
	})
	if got := lease.Schemes(); !strings.Contains(strings.Join(got, ","), s3lease.Scheme) {
		t.Errorf("lease.Schemes() = %v, want %q registered", got, s3lease.Scheme)
	}
}
