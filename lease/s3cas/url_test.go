package s3cas_test

import (
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/s3cas"
)

// isolateAWSEnv points the default AWS configuration chain at nothing but
// the variables a test sets: no shared config or credentials files, no
// profile, no endpoint, no IMDS.
func isolateAWSEnv(t *testing.T) {
	t.Helper()
	empty := filepath.Join(t.TempDir(), "empty")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{
		"AWS_CONFIG_FILE": empty, "AWS_SHARED_CREDENTIALS_FILE": empty, "AWS_EC2_METADATA_DISABLED": "true",
		"AWS_PROFILE": "", "AWS_DEFAULT_PROFILE": "", "AWS_ENDPOINT_URL": "", "AWS_ENDPOINT_URL_S3": "",
		"AWS_REGION": "", "AWS_DEFAULT_REGION": "", "AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "", "AWS_SESSION_TOKEN": "",
	} {
		t.Setenv(k, v)
	}
}

// TestOpenURL opens s3:// URLs against MinIO, with the endpoint in the URL
// and from AWS_ENDPOINT_URL_S3, and uses the lease.
func TestOpenURL(t *testing.T) {
	tg := targetSpecs[0].setup(t) // minio
	tg.ensureBucket(t)
	endpoint := os.Getenv("LEASEHOLD_MINIO_ENDPOINT")
	isolateAWSEnv(t)
	t.Setenv("AWS_ACCESS_KEY_ID", os.Getenv("LEASEHOLD_MINIO_ACCESS_KEY"))
	t.Setenv("AWS_SECRET_ACCESS_KEY", os.Getenv("LEASEHOLD_MINIO_SECRET_KEY"))

	use := func(t *testing.T, urlstr, key string) {
		t.Helper()
		tg.track(key)
		l, err := lease.Open(t.Context(), urlstr, lease.Options{Identity: "worker-1", TTL: testTTL})
		if err != nil {
			t.Fatalf("lease.Open(%q): %v", urlstr, err)
		}
		term, err := l.Acquire(t.Context())
		if err != nil {
			t.Fatalf("Acquire through %q: %v", urlstr, err)
		}
		if term, err = l.Renew(t.Context(), term); err != nil {
			t.Fatalf("Renew through %q: %v", urlstr, err)
		}
		body, etag, _ := tg.get(t, tg.newClient(nil), key)
		if r, err := lease.DecodeJSON(body); err != nil || r.Holder != "worker-1" || etag != term.Version {
			t.Errorf("object at %s is %s (ETag %s), want worker-1's record at ETag %s", key, body, etag, term.Version)
		}
		if err := l.Release(t.Context(), term); err != nil {
			t.Fatalf("Release through %q: %v", urlstr, err)
		}
	}
	t.Run("EndpointInURL", func(t *testing.T) {
		key := "s3cas-url/" + uniqueName("endpoint")
		use(t, "s3://"+tg.bucket+"/"+key+"?region=us-east-1&endpoint="+url.QueryEscape(endpoint)+"&use_path_style=true", key)
	})
	t.Run("EndpointFromEnv", func(t *testing.T) {
		t.Setenv("AWS_ENDPOINT_URL_S3", endpoint)
		t.Setenv("AWS_REGION", "us-east-1")
		key := "s3cas-url/" + uniqueName("env")
		use(t, "s3://"+tg.bucket+"/"+key+"?use_path_style=true", key)
	})
	t.Run("OpenWithoutClient", func(t *testing.T) {
		// s3cas.Open builds its client from the default chain.
		t.Setenv("AWS_ENDPOINT_URL", endpoint)
		t.Setenv("AWS_REGION", "us-east-1")
		key := "s3cas-url/" + uniqueName("default-chain")
		tg.track(key)
		l, err := s3cas.Open(t.Context(), s3cas.Options{Bucket: tg.bucket, Key: key, UsePathStyle: true}, lease.Options{Identity: "worker-1", TTL: testTTL})
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
	isolateAWSEnv(t)
	t.Setenv("AWS_REGION", "us-east-1")
	opts := lease.Options{Identity: "worker-1"}
	rows := []struct {
		name, url string
		mention   string
	}{
		{"UnknownParam", "s3://bucket/key?region=us-east-1&bogus=1&prefix=x", "unknown query parameter(s) bogus, prefix"},
		{"RateLimiterCapacity", "s3://bucket/key?rate_limiter_capacity=10", "unknown query parameter(s) rate_limiter_capacity"},
		{"AWSSDK", "s3://bucket/key?awssdk=v2", "unknown query parameter(s) awssdk"},
		{"RepeatedParam", "s3://bucket/key?region=us-east-1&region=eu-west-1", "repeats query parameter(s) region"},
		{"MissingKey", "s3://bucket", "names no key"},
		{"MissingKeySlash", "s3://bucket/", "names no key"},
		{"MissingBucket", "s3:///key", "names no bucket"},
		{"Port", "s3://127.0.0.1:9000/bucket/key", "has a port"},
		{"Credentials", "s3://AKIA:secret@bucket/key", "carries credentials"},
		{"BadPathStyle", "s3://bucket/key?use_path_style=maybe", `use_path_style="maybe"`},
		{"BadBool", "s3://bucket/key?hostname_immutable=maybe", "invalid value for hostname_immutable"},
		{"BadRole", "s3://bucket/key?role=admin", "invalid value for role"},
		{"UnknownProfile", "s3://bucket/key?profile=leasehold-no-such-profile", "leasehold-no-such-profile"},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			_, err := lease.Open(t.Context(), row.url, opts)
			t.Logf("%s: %v", row.url, err)
			if !errors.Is(err, lease.ErrInvalid) {
				t.Fatalf("lease.Open(%q): %v, want lease.ErrInvalid", row.url, err)
			}
			if !strings.Contains(err.Error(), row.mention) || !strings.HasPrefix(err.Error(), "s3cas: URL (") {
				t.Errorf("lease.Open(%q): %q, want an s3cas URL error mentioning %q", row.url, err, row.mention)
			}
			if strings.Contains(err.Error(), "secret") {
				t.Errorf("error %q shows the URL's password", err)
			}
		})
	}

	t.Run("OpenerWithClient", func(t *testing.T) {
		o := &s3cas.URLOpener{Client: staticClient("http://127.0.0.1:1", "test", "test")(nil)}
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

	client := staticClient("http://127.0.0.1:1", "test", "test")(nil)
	for _, row := range []struct {
		name    string
		opts    s3cas.Options
		mention string
	}{
		{"EmptyBucket", s3cas.Options{Key: "k", Client: client}, `s3cas: Bucket ("") must not be empty`},
		{"EmptyKey", s3cas.Options{Bucket: "b", Client: client}, `s3cas: Key ("") must not be empty`},
		{"LongKey", s3cas.Options{Bucket: "b", Key: strings.Repeat("k", 1025), Client: client}, "is 1025 bytes long; S3 allows at most 1024"},
	} {
		t.Run(row.name, func(t *testing.T) {
			_, err := s3cas.Open(t.Context(), row.opts, opts)
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
		if !errors.Is(err, lease.ErrInvalid) || !strings.Contains(err.Error(), "s3cas: region") {
			t.Errorf("lease.Open without a region: %v, want lease.ErrInvalid naming the region", err)
		}
	})
	t.Run("InvalidLeaseOptions", func(t *testing.T) {
		_, err := s3cas.Open(t.Context(), s3cas.Options{Bucket: "b", Key: "k", Client: client}, lease.Options{})
		t.Logf("%v", err)
		if !errors.Is(err, lease.ErrInvalid) || !strings.Contains(err.Error(), "Identity") {
			t.Errorf("Open with no identity: %v, want lease.ErrInvalid naming Identity", err)
		}
	})
	if got := lease.Schemes(); !strings.Contains(strings.Join(got, ","), s3cas.Scheme) {
		t.Errorf("lease.Schemes() = %v, want %q registered", got, s3cas.Scheme)
	}
}
