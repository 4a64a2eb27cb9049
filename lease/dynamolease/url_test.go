package dynamolease_test

import (
	"errors"
	"net/url"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	ddb "github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/dynamolease"
	"github.com/leasehold/leasehold/lease/internal/awstest"
	"github.com/leasehold/leasehold/lease/internal/emulators/dynamoemu"
	"github.com/leasehold/leasehold/lease/internal/storetest"
)

// TestOpenURL opens dynamodb:// URLs against dynalite, with the endpoint in
// the URL and from the environment, and uses the lease.
func TestOpenURL(t *testing.T) {
	tg := targets.First(t) // dynalite
	endpoint := os.Getenv("LEASEHOLD_DYNALITE_ENDPOINT")
	awstest.IsolateEnv(t)
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	c := tg.NewClient(nil)

	// use opens the lease urlstr names, acquires, renews and releases it,
	// and checks its item, read by key.
	use := func(t *testing.T, urlstr string, key map[string]types.AttributeValue) {
		t.Helper()
		storetest.UseURL(t, urlstr, testTTL, func(term lease.Term) {
			out, err := c.GetItem(t.Context(), &ddb.GetItemInput{TableName: aws.String(tableOf(urlstr)), Key: key, ConsistentRead: aws.Bool(true)})
			if err != nil || !reflect.DeepEqual(out.Item["holder"], s("worker-1")) || !reflect.DeepEqual(out.Item["nonce"], s(term.Version)) {
				t.Errorf("item at %s is %v (%v), want worker-1's item with nonce %s", show(key), show(out.Item), err, term.Version)
			}
		})
	}
	t.Run("EndpointInURL", func(t *testing.T) {
		name := storetest.UniqueName("dynamodb-url/endpoint")
		use(t, tg.URL(name), dynamoemu.Key(name))
	})
	t.Run("EndpointFromEnv", func(t *testing.T) {
		t.Setenv("AWS_ENDPOINT_URL_DYNAMODB", endpoint)
		t.Setenv("AWS_REGION", "us-east-1")
		name := storetest.UniqueName("dynamodb-url/env")
		tg.Track(name)
		use(t, "dynamodb://"+tg.Table+"/"+name, dynamoemu.Key(name))
	})
	t.Run("KeyAttribute", func(t *testing.T) {
		t.Setenv("AWS_ENDPOINT_URL", endpoint)
		t.Setenv("AWS_REGION", "us-east-1")
		table := tg.CreateTable(t, c, "leasehold-url", []types.KeySchemaElement{{AttributeName: aws.String("id"), KeyType: types.KeyTypeHash}},
			map[string]types.ScalarAttributeType{"id": types.ScalarAttributeTypeS})
		use(t, "dynamodb://"+table+"/jobs?key_attribute=id", map[string]types.AttributeValue{"id": s("jobs")})
		// A table keyed by id, opened without key_attribute: the check at
		// Open says what it found.
		_, err := lease.Open(t.Context(), "dynamodb://"+table+"/jobs", lease.Options{Identity: "worker-1"})
		if !errors.Is(err, lease.ErrNotFound) || !strings.Contains(err.Error(), `[HASH "id" of type S]`) {
			t.Errorf("lease.Open without key_attribute on a table keyed by id: %v, want lease.ErrNotFound naming the key", err)
		}
	})
	t.Run("OpenWithoutClient", func(t *testing.T) {
		// dynamolease.Open builds its client from the default chain.
		t.Setenv("AWS_ENDPOINT_URL", endpoint)
		t.Setenv("AWS_REGION", "us-east-1")
		name := storetest.UniqueName("dynamodb-url/default-chain")
		tg.Track(name)
		l, err := dynamolease.Open(t.Context(), dynamolease.Options{Table: tg.Table, Name: name}, lease.Options{Identity: "worker-1", TTL: testTTL})
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		if _, err := l.Acquire(t.Context()); err != nil {
			t.Fatalf("Acquire: %v", err)
		}
	})
}

// tableOf returns the table a dynamodb:// URL names.
func tableOf(urlstr string) string {
	u, _ := url.Parse(urlstr)
	return u.Host
}

// TestOpenErrors: bad URLs and options are lease.ErrInvalid, naming the
// field or parameter at fault, before any request is sent.
func TestOpenErrors(t *testing.T) {
	awstest.IsolateEnv(t)
	t.Setenv("AWS_REGION", "us-east-1")
	storetest.RefuseURLs(t, "dynamolease", []storetest.BadURL{
		{Name: "UnknownParam", URL: "dynamodb://leases/jobs?region=us-east-1&bogus=1&prefix=x", Mention: "unknown query parameter(s) bogus, prefix"},
		{Name: "S3Param", URL: "dynamodb://leases/jobs?use_path_style=true", Mention: "unknown query parameter(s) use_path_style"},
		{Name: "ChecksumParam", URL: "dynamodb://leases/jobs?request_checksum_calculation=when_required", Mention: "unknown query parameter(s) request_checksum_calculation (known: anonymous, dualstack, endpoint, fips, hostname_immutable, key_attribute, profile, region, role)"},
		{Name: "RateLimiterCapacity", URL: "dynamodb://leases/jobs?rate_limiter_capacity=10", Mention: "unknown query parameter(s) rate_limiter_capacity"},
		{Name: "RepeatedParam", URL: "dynamodb://leases/jobs?key_attribute=a&key_attribute=b", Mention: "repeats query parameter(s) key_attribute"},
		{Name: "MissingName", URL: "dynamodb://leases", Mention: "names no lease name; want dynamodb://TABLE/NAME"},
		{Name: "MissingTable", URL: "dynamodb:///jobs", Mention: "names no table; want dynamodb://TABLE/NAME"},
		{Name: "Port", URL: "dynamodb://127.0.0.1:8000/leases/jobs", Mention: "has a port; want dynamodb://TABLE/NAME, with the endpoint in ?endpoint="},
		{Name: "Credentials", URL: "dynamodb://AKIA:secret@leases/jobs", Mention: "carries credentials; dynamolease takes them from the default AWS configuration chain"},
		{Name: "EmptyKeyAttribute", URL: "dynamodb://leases/jobs?key_attribute=", Mention: `has an empty key_attribute; leave it out for the default "lease"`},
		{Name: "BadBool", URL: "dynamodb://leases/jobs?fips=maybe", Mention: "invalid value for fips"},
		{Name: "BadRole", URL: "dynamodb://leases/jobs?role=admin", Mention: "invalid value for role"},
		{Name: "UnknownProfile", URL: "dynamodb://leases/jobs?profile=leasehold-no-such-profile", Mention: "leasehold-no-such-profile"},
	})

	// A client of a server that must never be reached.
	client := dynamoemu.StaticClient(storetest.ClosedPort(t), "test")(nil)
	opts := lease.Options{Identity: "worker-1"}
	for _, row := range []struct {
		name    string
		opts    dynamolease.Options
		mention string
	}{
		{"EmptyTable", dynamolease.Options{Name: "jobs", Client: client}, `dynamolease: Table ("") must be 3 to 255 letters, digits, '_', '-' or '.'`},
		{"ShortTable", dynamolease.Options{Table: "ab", Name: "jobs", Client: client}, `dynamolease: Table ("ab") must be 3 to 255`},
		{"LongTable", dynamolease.Options{Table: strings.Repeat("t", 256), Name: "jobs", Client: client}, `must be 3 to 255 letters`},
		{"TableWithSpace", dynamolease.Options{Table: "my leases", Name: "jobs", Client: client}, `dynamolease: Table ("my leases")`},
		{"EmptyName", dynamolease.Options{Table: "leases", Client: client}, `dynamolease: Name ("") must not be empty`},
		{"LongName", dynamolease.Options{Table: "leases", Name: strings.Repeat("n", 2049), Client: client}, "is 2049 bytes long; at most 2032 are allowed"},
		{"ProbeName", dynamolease.Options{Table: "leases", Name: "jobs.leasehold-probe", Client: client}, `dynamolease: Name ("jobs.leasehold-probe") must not end with .leasehold-probe: that names the probe key of "jobs"`},
		{"KeyAttributeIsRecordAttribute", dynamolease.Options{Table: "leases", Name: "jobs", KeyAttribute: "token", Client: client},
			`dynamolease: KeyAttribute ("token") is an attribute of the lease item; choose a name other than [leasehold holder token ttl_ms released nonce]`},
		{"LongKeyAttribute", dynamolease.Options{Table: "leases", Name: "jobs", KeyAttribute: strings.Repeat("k", 256), Client: client}, "is 256 bytes long; DynamoDB allows at most 255"},
	} {
		t.Run(row.name, func(t *testing.T) {
			_, err := dynamolease.Open(t.Context(), row.opts, opts)
			t.Logf("%v", err)
			if !errors.Is(err, lease.ErrInvalid) || !strings.Contains(err.Error(), row.mention) {
				t.Errorf("Open: %v, want lease.ErrInvalid mentioning %q", err, row.mention)
			}
		})
	}
	t.Run("NoRegion", func(t *testing.T) {
		t.Setenv("AWS_REGION", "")
		_, err := lease.Open(t.Context(), "dynamodb://leases/jobs", opts)
		t.Logf("%v", err)
		if !errors.Is(err, lease.ErrInvalid) || !strings.Contains(err.Error(), `dynamolease: region ("") is not set`) {
			t.Errorf("lease.Open without a region: %v, want lease.ErrInvalid naming the region", err)
		}
	})
	t.Run("InvalidLeaseOptions", func(t *testing.T) {
		_, err := dynamolease.Open(t.Context(), dynamolease.Options{Table: "leases", Name: "jobs", Client: client}, lease.Options{})
		t.Logf("%v", err)
		if !errors.Is(err, lease.ErrInvalid) || !strings.Contains(err.Error(), "Identity") {
			t.Errorf("Open with no identity: %v, want lease.ErrInvalid naming Identity", err)
		}
	})
	t.Run("OpenerWithClient", func(t *testing.T) {
		o := &dynamolease.URLOpener{Client: client}
		u, _ := url.Parse("dynamodb://leases/jobs?key_attribute=id&region=eu-west-1")
		_, err := o.OpenLeaseURL(t.Context(), u, opts)
		t.Logf("%v", err)
		if !errors.Is(err, lease.ErrInvalid) || !strings.Contains(err.Error(), "has query parameter(s) region, but the URLOpener has a Client") {
			t.Errorf("OpenLeaseURL with a Client and ?region: %v, want lease.ErrInvalid naming region", err)
		}
		// key_attribute is not the client's: Open goes on to describe the
		// table, on a port nobody listens on.
		u, _ = url.Parse("dynamodb://leases/jobs?key_attribute=id")
		if _, err := o.OpenLeaseURL(t.Context(), u, opts); !errors.Is(err, lease.ErrUnavailable) {
			t.Errorf("OpenLeaseURL with a Client and ?key_attribute: %v, want the lease's DescribeTable to fail as lease.ErrUnavailable", err)
		}
	})
	if got := lease.Schemes(); !strings.Contains(strings.Join(got, ","), dynamolease.Scheme) {
		t.Errorf("lease.Schemes() = %v, want %q registered", got, dynamolease.Scheme)
	}
}
