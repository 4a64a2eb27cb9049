package urlfuzz_test

import (
	"context"
	"errors"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leasehold/leasehold/lease"
	_ "github.com/leasehold/leasehold/lease/azurelease"
	_ "github.com/leasehold/leasehold/lease/dynamolease"
	_ "github.com/leasehold/leasehold/lease/gcslease"
	_ "github.com/leasehold/leasehold/lease/memlease"
	_ "github.com/leasehold/leasehold/lease/quorumlease"
	_ "github.com/leasehold/leasehold/lease/s3lease"
)

// rawUserinfo finds "user:password@" right after a URL's first "://".
var rawUserinfo = regexp.MustCompile(`^[^:/?#]*://([^/?#@:]*):([^/?#@]+)@`)

// tripwire listens on loopback and counts the connections made to it: the
// endpoint, proxy and Azure blob endpoint that the environment points
// every client at, so that any request sent during Open shows.
func tripwire(tb testing.TB) (addr string, dialled *atomic.Int64) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ln.Close() })
	dialled = new(atomic.Int64)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			dialled.Add(1)
			c.Close()
		}
	}()
	return ln.Addr().String(), dialled
}

// isolate points every default endpoint, the HTTP(S) proxy and Azure's
// connection string (also in LEASEHOLD_FUZZ_CS) at a tripwire for the rest
// of the test, and returns its count of connections: an opener that sends
// a request shows.
func isolate(tb testing.TB) *atomic.Int64 {
	addr, dialled := tripwire(tb)
	empty := filepath.Join(tb.TempDir(), "empty")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		tb.Fatal(err)
	}
	azurite := "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;BlobEndpoint=http://" + addr + "/devstoreaccount1;"
	for k, v := range map[string]string{
		"AWS_CONFIG_FILE": empty, "AWS_SHARED_CREDENTIALS_FILE": empty, "AWS_EC2_METADATA_DISABLED": "true",
		"AWS_PROFILE": "", "AWS_DEFAULT_PROFILE": "", "AWS_REGION": "us-east-1", "AWS_DEFAULT_REGION": "",
		"AWS_ACCESS_KEY_ID": "fuzz", "AWS_SECRET_ACCESS_KEY": "fuzz", "AWS_SESSION_TOKEN": "",
		"AWS_ENDPOINT_URL": "http://" + addr, "AWS_ENDPOINT_URL_S3": "http://" + addr, "AWS_ENDPOINT_URL_DYNAMODB": "http://" + addr,
		"HTTP_PROXY": "http://" + addr, "HTTPS_PROXY": "http://" + addr, "NO_PROXY": "", "http_proxy": "", "https_proxy": "", "no_proxy": "",
		"AZURE_STORAGE_CONNECTION_STRING": azurite, "LEASEHOLD_FUZZ_CS": azurite,
		"AZURE_CLIENT_ID": "", "AZURE_TENANT_ID": "", "AZURE_CLIENT_SECRET": "", "AZURE_FEDERATED_TOKEN_FILE": "",
		"IDENTITY_ENDPOINT": "", "MSI_ENDPOINT": "",
		"STORAGE_EMULATOR_HOST": addr, "GOOGLE_APPLICATION_CREDENTIALS": "",
	} {
		tb.Setenv(k, v)
	}
	return dialled
}

// FuzzOpen: lease.Open with every backend registered must not panic, and
// must either open the lease or refuse the URL or options with
// lease.ErrInvalid, whose message never shows the URL's password (also when
// the URL is malformed). No opener may send a request: s3, gs and azblob
// send none at Open, and dynamodb's one DescribeTable is not begun under
// the cancelled context it is given (driver.Call: otherwise a role='s STS
// fetch, which the AWS SDK finishes under a context of its own, reached
// the tripwire after Open had returned and failed a later input); the environment points every
// default endpoint (Cloud Storage's through STORAGE_EMULATOR_HOST, so that
// no credentials are looked for), the HTTP(S) proxy and Azure's connection
// string at a tripwire that fails the test if anything connects. Seeds:
// testdata/fuzz/FuzzOpen.
func FuzzOpen(f *testing.F) {
	dialled := isolate(f)

	for _, s := range []string{
		"mem://jobs",
		"mem://jobs/nightly?x=1",
		"s3://bucket/jobs/nightly?region=eu-west-1",
		"s3://bucket/key?region=us-east-1&endpoint=http://127.0.0.1:9000&use_path_style=true",
		"s3://user:secret-password@bucket/key",
		"s3://bucket:9000/key",
		"s3://bucket/key?use_path_style=maybe&region=a&region=b",
		"s3://bucket/key?rate_limiter_capacity=5&awssdk=v1&request_checksum_calculation=when_required",
		"dynamodb://leases/jobs/nightly?region=eu-west-1",
		"dynamodb://leases/jobs?key_attribute=id&endpoint=http://127.0.0.1:8000&hostname_immutable=true",
		"dynamodb://leases/jobs?key_attribute=&profile=p&role=arn:aws:iam::1:role/r",
		"dynamodb://le/jobs?key_attribute=token",
		"dynamodb://leases/jobs?role=arn:aws:iam::1:role/r",
		"dynamodb://user:secret-password@leases/jobs",
		"azblob://leases/nightly-report?account=mystorageaccount",
		"azblob://leases/nightly-report?connection_string_env=LEASEHOLD_FUZZ_CS&infinite_lease=true",
		"azblob://leases/b?endpoint=https://acct.blob.core.windows.net/",
		"azblob://leases/b?endpoint=http://user:secret-password@127.0.0.1:1/x",
		"azblob://Leases--x/b?account=A&endpoint=x",
		"azblob://leases/b?endpoint=https://user:secret-password@acct.blob.core.windows.net/&x=1",
		"s3://bucket/key?endpoint=http://user:secret-password@127.0.0.1:9000&x=1",
		"dynamodb://leases/jobs?endpoint=http%3A%2F%2Fu%3Asecret-password%40127.0.0.1%3A8000&bogus=1",
		"azblob://user:secret-password@leases/b",
		"gs://leases/jobs/nightly",
		"gs://leases/jobs?ttl=15s&user_project=p",
		"gs://user:secret-password@leases/jobs",
		"gs://leases:443/jobs",
		"gs://leases/",
		"bucket/key",
		"mem://jobs%zz",
		"mem://jobs?x=%zz",
		"s3://bucket/key?region=us-east-1&endpoint=http://127.0.0.1:9000/%zz",
		"s3://bucket/key?region=us-east-1;use_path_style=true",
		"quorum:mem://a,mem://b,mem://c",
		"quorum:s3://user:secret-password@b/k,dynamodb://t/k?role=arn:aws:iam::1:role/r,gs://g/k",
		"quorum:mem://a,mem://b?x=%zz,mem://c",
		"quorum:mem://a,mem://a,mem://c",
		"quorum:mem://a,quorum:mem://b,mem://c",
		"quorum:,,",
		"",
	} {
		f.Add(s, int64(15000))
	}
	f.Add("azblob://leases/b", int64(10000))
	f.Add("s3://bucket/key", int64(0))
	f.Add("gs://leases/jobs", int64(2999))
	f.Add("mem://jobs", int64(-1))

	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	f.Fuzz(func(t *testing.T, urlstr string, ttlMS int64) {
		opts := lease.Options{Identity: "fuzz", TTL: time.Duration(ttlMS) * time.Millisecond}
		l, err := lease.Open(cancelled, urlstr, opts)
		if n := dialled.Load(); n > 0 {
			t.Fatalf("lease.Open(%q): %d connection(s) to the tripwire: an opener sent a request", urlstr, n)
		}
		u, perr := url.Parse(urlstr)
		if err == nil {
			if _, qerr := url.ParseQuery(u.RawQuery); qerr != nil {
				t.Fatalf("lease.Open(%q) opened a lease although its query cannot be parsed (%v)", urlstr, qerr)
			}
			if l == nil || l.Options() != opts.WithDefaults() {
				t.Fatalf("lease.Open(%q) = %v, want a lease with options %+v", urlstr, l, opts.WithDefaults())
			}
			return
		}
		if l != nil {
			t.Fatalf("lease.Open(%q) = %v and error %v, want no lease with an error", urlstr, l, err)
		}
		// DynamoDB's opener describes the table, under the cancelled
		// context: a quorum with a DynamoDB member's too.
		dynamo := perr == nil && (u.Scheme == "dynamodb" || u.Scheme == "quorum" && strings.Contains(urlstr, "dynamodb:"))
		if !errors.Is(err, lease.ErrInvalid) && !(dynamo && err == context.Canceled) {
			t.Fatalf("lease.Open(%q, TTL %dms): %v, want an error matching lease.ErrInvalid", urlstr, ttlMS, err)
		}
		// "user:password@", as url.Parse reads it, or for a URL it refuses,
		// as written between "://" and "@"; not when the password is
		// "xxxxx", which is what redaction shows.
		var userinfo string
		if perr == nil && u.User != nil {
			if pw, ok := u.User.Password(); ok && pw != "" && pw != "xxxxx" {
				userinfo = u.User.Username() + ":" + pw + "@"
			}
		} else if m := rawUserinfo.FindStringSubmatch(urlstr); m != nil && m[2] != "xxxxx" {
			userinfo = m[1] + ":" + m[2] + "@"
		}
		if userinfo != "" && strings.Count(urlstr, userinfo) == 1 && strings.Contains(err.Error(), userinfo) {
			t.Fatalf("lease.Open(%q): error %q shows the URL's password", urlstr, err)
		}
		// Nor the password of a URL in its query, such as ?endpoint=.
		if perr == nil {
			for _, values := range u.Query() {
				for _, v := range values {
					if nu, perr := url.Parse(v); perr == nil && nu.User != nil {
						pw, ok := nu.User.Password()
						if secret := nu.User.Username() + ":" + pw + "@"; ok && pw != "" && pw != "xxxxx" && strings.Count(urlstr, secret) == 1 && strings.Contains(err.Error(), secret) {
							t.Fatalf("lease.Open(%q): error %q shows the password of %q", urlstr, err, v)
						}
					}
				}
			}
		}
	})
}
