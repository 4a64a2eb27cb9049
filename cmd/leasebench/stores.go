package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	ddb "github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"google.golang.org/api/option"
	storage "google.golang.org/api/storage/v1"

	"github.com/leasehold/leasehold/internal/pricing"
	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/azurelease"
	"github.com/leasehold/leasehold/lease/dynamolease"
	"github.com/leasehold/leasehold/lease/gcslease"
	"github.com/leasehold/leasehold/lease/memlease"
	"github.com/leasehold/leasehold/lease/s3lease"
	"github.com/leasehold/leasehold/shard"
)

// region is the AWS region the emulators are addressed in.
const region = "us-east-1"

// opener opens the lease called name through one connection (one client)
// to a store: a contender process's view of the store.
type opener func(ctx context.Context, name string, opts lease.Options) (lease.Lease, error)

// store is one backend of the local test stack, as leasebench reaches it.
type store struct {
	// name is the store's row in the tables: "minio", "dynalite", ...
	name string
	// service is what it emulates, and so how its requests are priced.
	service pricing.Service
	// ttl is the TTL its leases get in the timing measurements.
	ttl time.Duration
	// endpoint is the store's own base URL ("" for memory). Requests that
	// are counted go through a countingProxy in front of it instead.
	endpoint string
	// connect returns an opener whose requests go to endpoint.
	connect func(endpoint string) (opener, error)
	// label names a request for counting (by operation).
	label func(*http.Request) string
	// cli returns the lease URL and the environment by which a leasehold
	// process reaches the lease called name, its requests going to
	// endpoint (-footprint).
	cli func(endpoint, name string) (leaseURL string, env []string)
	// mem is the in-memory store, whose calls memlease counts itself.
	mem *memlease.Store
	// members are a quorum's member stores, in the members' order (see
	// quorum.over); nil for a single store.
	members []*store
	// objects, when set, opens the shard group called group for the worker
	// identity, its requests going to endpoint (the -shards scenarios).
	objects func(ctx context.Context, endpoint, group, identity string) (shard.Store, error)
	// groups is the prefix of the shard groups' names ("" or "run/"), under
	// which cleanup removes them.
	groups string
	// cleanup removes what setup made.
	cleanup func(ctx context.Context)
	// server names the server the store shares with another ("moto"), or
	// is empty; such stores are measured one after the other, each with
	// at most parallel trials at once, its requests counted after its
	// trials, for why.
	server, why string
	parallel    int
}

// moto's two stores share one single-threaded server, which twenty pairs
// on each, their followers reading twice per renewal, slowed past the
// renew deadline on a loaded machine (every trial void): they run one
// after the other, at most 8 trials at once, at a TTL of 3s.
const (
	motoParallel = 8
	motoTTL      = 3 * time.Second
	motoWhy      = "one single-threaded server for both, too slow for 2 x 20 pairs at 2s on a loaded machine"
)

// onMoto marks st as one of moto's stores.
func onMoto(st *store) {
	st.server, st.why, st.parallel = "moto", motoWhy, motoParallel
}

// The stores leasebench knows, in table order, with the variables of
// scripts/stack env that locate them.
var storeNames = []string{"mem", "minio", "moto-s3", "dynalite", "moto-dynamodb", "azurite", "gcs"}

// setupStore makes the store called name ready: a bucket, table or
// container of this run's own. It returns a nil store and the reason when
// the store is not configured (its variable is not set).
func setupStore(ctx context.Context, name string, ttl time.Duration) (*store, string, error) {
	run := "leasebench-" + randomHex(4)
	env := func(v string) string { return os.Getenv(v) }
	switch name {
	case "mem":
		m := memlease.NewStore()
		return &store{name: name, service: pricing.Memory, ttl: ttl, mem: m,
			connect: func(string) (opener, error) {
				return func(_ context.Context, n string, opts lease.Options) (lease.Lease, error) { return m.Open(n, opts) }, nil
			},
			objects: func(_ context.Context, _, _, identity string) (shard.Store, error) { return m.Objects(identity), nil },
			cli:     func(_, n string) (string, []string) { return "mem://" + n, nil },
			cleanup: func(context.Context) {},
		}, "", nil
	case "minio":
		ep := env("LEASEHOLD_MINIO_ENDPOINT")
		if ep == "" {
			return nil, "LEASEHOLD_MINIO_ENDPOINT is not set", nil
		}
		return setupS3(ctx, name, ep, env("LEASEHOLD_MINIO_ACCESS_KEY"), env("LEASEHOLD_MINIO_SECRET_KEY"), run, ttl)
	case "moto-s3":
		ep := env("LEASEHOLD_MOTO_ENDPOINT")
		if ep == "" {
			return nil, "LEASEHOLD_MOTO_ENDPOINT is not set", nil
		}
		st, why, err := setupS3(ctx, name, ep, "bench", "bench", run, max(ttl, motoTTL))
		if st != nil {
			onMoto(st)
		}
		return st, why, err
	case "dynalite":
		ep := env("LEASEHOLD_DYNALITE_ENDPOINT")
		if ep == "" {
			return nil, "LEASEHOLD_DYNALITE_ENDPOINT is not set", nil
		}
		return setupDynamo(ctx, name, ep, run, ttl)
	case "moto-dynamodb":
		ep := env("LEASEHOLD_MOTO_ENDPOINT")
		if ep == "" {
			return nil, "LEASEHOLD_MOTO_ENDPOINT is not set", nil
		}
		st, why, err := setupDynamo(ctx, name, ep, run, max(ttl, motoTTL))
		if st != nil {
			onMoto(st)
		}
		return st, why, err
	case "azurite":
		cs := env("LEASEHOLD_AZURITE_CONNECTION_STRING")
		if cs == "" {
			return nil, "LEASEHOLD_AZURITE_CONNECTION_STRING is not set", nil
		}
		return setupAzure(ctx, name, cs, run, max(ttl, azurelease.MinTTL))
	case "gcs":
		host, bucket := env("STORAGE_EMULATOR_HOST"), env("LEASEHOLD_GCS_BUCKET")
		if host == "" || bucket == "" {
			return nil, "STORAGE_EMULATOR_HOST or LEASEHOLD_GCS_BUCKET is not set", nil
		}
		return setupGCS(ctx, name, "http://"+host, bucket, run, max(ttl, gcslease.MinTTL))
	}
	return nil, "", fmt.Errorf("unknown backend %q (known: %s)", name, strings.Join(storeNames, ", "))
}

func setupS3(ctx context.Context, name, endpoint, key, secret, bucket string, ttl time.Duration) (*store, string, error) {
	client := func(ep string) *s3.Client {
		return s3.New(s3.Options{
			Region: region, BaseEndpoint: aws.String(ep), UsePathStyle: true,
			Credentials: credentials.NewStaticCredentialsProvider(key, secret, ""),
		})
	}
	admin := client(endpoint)
	if _, err := admin.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: &bucket}); err != nil {
		return nil, "", fmt.Errorf("%s: CreateBucket %s: %w", name, bucket, err)
	}
	return &store{
		name: name, service: pricing.S3, ttl: ttl, endpoint: endpoint,
		connect: func(ep string) (opener, error) {
			c := client(ep)
			return func(ctx context.Context, n string, opts lease.Options) (lease.Lease, error) {
				return s3lease.Open(ctx, s3lease.Options{Bucket: bucket, Key: n, Client: c, UsePathStyle: true}, opts)
			}, nil
		},
		objects: func(ctx context.Context, ep, _, _ string) (shard.Store, error) {
			return s3lease.OpenObjects(ctx, s3lease.ObjectsOptions{Bucket: bucket, Client: client(ep), UsePathStyle: true})
		},
		label: func(r *http.Request) string { return r.Method },
		cli: func(ep, n string) (string, []string) {
			return fmt.Sprintf("s3://%s/%s?region=%s&endpoint=%s&use_path_style=true", bucket, n, region, url.QueryEscape(ep)),
				[]string{"AWS_ACCESS_KEY_ID=" + key, "AWS_SECRET_ACCESS_KEY=" + secret}
		},
		cleanup: func(ctx context.Context) {
			var token *string
			for {
				out, err := admin.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: &bucket, ContinuationToken: token})
				if err != nil {
					return
				}
				for _, o := range out.Contents {
					_, _ = admin.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &bucket, Key: o.Key})
				}
				if out.NextContinuationToken == nil {
					break
				}
				token = out.NextContinuationToken
			}
			_, _ = admin.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: &bucket})
		},
	}, "", nil
}

func setupDynamo(ctx context.Context, name, endpoint, table string, ttl time.Duration) (*store, string, error) {
	admin := dynamoClient(endpoint)
	if err := createTable(ctx, admin, table, dynamolease.DefaultKeyAttribute); err != nil {
		return nil, "", fmt.Errorf("%s: %w", name, err)
	}
	groups := table + "-groups"
	if err := createGroupTable(ctx, admin, groups); err != nil {
		return nil, "", fmt.Errorf("%s: %w", name, err)
	}
	return &store{
		name: name, service: pricing.DynamoDB, ttl: ttl, endpoint: endpoint,
		connect: func(ep string) (opener, error) {
			c := dynamoClient(ep)
			return func(ctx context.Context, n string, opts lease.Options) (lease.Lease, error) {
				return dynamolease.Open(ctx, dynamolease.Options{Table: table, Name: n, Client: c}, opts)
			}, nil
		},
		objects: func(ctx context.Context, ep, group, _ string) (shard.Store, error) {
			return dynamolease.NewObjects(ctx, dynamolease.ObjectsOptions{Table: groups, Group: group, Client: dynamoClient(ep)})
		},
		label: byTarget,
		cli: func(ep, n string) (string, []string) {
			return fmt.Sprintf("dynamodb://%s/%s?region=%s&endpoint=%s", table, n, region, url.QueryEscape(ep)),
				[]string{"AWS_ACCESS_KEY_ID=bench", "AWS_SECRET_ACCESS_KEY=bench"}
		},
		cleanup: func(ctx context.Context) {
			_, _ = admin.DeleteTable(ctx, &ddb.DeleteTableInput{TableName: &table})
			_, _ = admin.DeleteTable(ctx, &ddb.DeleteTableInput{TableName: &groups})
		},
	}, "", nil
}

// dynamoClient is a client of a DynamoDB emulator at endpoint.
func dynamoClient(endpoint string) *ddb.Client {
	return ddb.New(ddb.Options{
		Region: region, BaseEndpoint: aws.String(endpoint),
		Credentials: credentials.NewStaticCredentialsProvider("bench", "bench", ""),
	})
}

// createTable creates an on-demand table with one HASH key of type S.
func createTable(ctx context.Context, c *ddb.Client, table, key string) error {
	_, err := c.CreateTable(ctx, &ddb.CreateTableInput{
		TableName:            &table,
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: &key, AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: &key, KeyType: types.KeyTypeHash}},
		BillingMode:          types.BillingModePayPerRequest,
	})
	if err != nil {
		return fmt.Errorf("CreateTable %s: %w", table, err)
	}
	w := ddb.NewTableExistsWaiter(c)
	return w.Wait(ctx, &ddb.DescribeTableInput{TableName: &table}, 30*time.Second)
}

// createGroupTable creates an on-demand table for shard groups: the
// partition key "group" and the sort key "key", both of type S
// (dynamolease.ObjectsOptions).
func createGroupTable(ctx context.Context, c *ddb.Client, table string) error {
	group, key := dynamolease.DefaultGroupAttribute, dynamolease.DefaultObjectKeyAttribute
	_, err := c.CreateTable(ctx, &ddb.CreateTableInput{
		TableName: &table,
		AttributeDefinitions: []types.AttributeDefinition{
			{AttributeName: &group, AttributeType: types.ScalarAttributeTypeS},
			{AttributeName: &key, AttributeType: types.ScalarAttributeTypeS},
		},
		KeySchema: []types.KeySchemaElement{
			{AttributeName: &group, KeyType: types.KeyTypeHash},
			{AttributeName: &key, KeyType: types.KeyTypeRange},
		},
		BillingMode: types.BillingModePayPerRequest,
	})
	if err != nil {
		return fmt.Errorf("CreateTable %s: %w", table, err)
	}
	return ddb.NewTableExistsWaiter(c).Wait(ctx, &ddb.DescribeTableInput{TableName: &table}, 30*time.Second)
}

// byTarget labels a DynamoDB request with its operation: "GetItem".
func byTarget(r *http.Request) string {
	t := r.Header.Get("X-Amz-Target")
	return t[strings.LastIndexByte(t, '.')+1:]
}

// setupGCS uses the emulator's bucket, with this run's leases under the
// prefix run/.
func setupGCS(ctx context.Context, name, endpoint, bucket, run string, ttl time.Duration) (*store, string, error) {
	client := func(ep string) (*storage.Service, error) {
		return storage.NewService(ctx, option.WithEndpoint(ep+"/storage/v1/"), option.WithoutAuthentication())
	}
	admin, err := client(endpoint)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", name, err)
	}
	return &store{
		name: name, service: pricing.GCS, ttl: ttl, endpoint: endpoint,
		connect: func(ep string) (opener, error) {
			c, err := client(ep)
			if err != nil {
				return nil, err
			}
			return func(ctx context.Context, n string, opts lease.Options) (lease.Lease, error) {
				return gcslease.Open(ctx, gcslease.Options{Bucket: bucket, Object: run + "/" + n, Client: c}, opts)
			}, nil
		},
		objects: func(ctx context.Context, ep, _, _ string) (shard.Store, error) {
			c, err := client(ep)
			if err != nil {
				return nil, err
			}
			return gcslease.OpenObjects(ctx, gcslease.ObjectsOptions{Bucket: bucket, Client: c})
		},
		groups: run + "/",
		label:  func(r *http.Request) string { return r.Method },
		cli: func(ep, n string) (string, []string) {
			return "gs://" + bucket + "/" + run + "/" + n, []string{"STORAGE_EMULATOR_HOST=" + strings.TrimPrefix(ep, "http://")}
		},
		cleanup: func(ctx context.Context) {
			_ = admin.Objects.List(bucket).Prefix(run+"/").Fields("nextPageToken", "items(name)").Pages(ctx, func(page *storage.Objects) error {
				for _, obj := range page.Items {
					_ = admin.Objects.Delete(bucket, obj.Name).Context(ctx).Do()
				}
				return nil
			})
		},
	}, "", nil
}

var blobEndpoint = regexp.MustCompile(`BlobEndpoint=[^;]*`)

func setupAzure(ctx context.Context, name, connectionString, container string, ttl time.Duration) (*store, string, error) {
	m := blobEndpoint.FindString(connectionString)
	if m == "" {
		return nil, "", fmt.Errorf("%s: the connection string has no BlobEndpoint", name)
	}
	endpoint := strings.TrimPrefix(m, "BlobEndpoint=")
	// The account's name is the endpoint's path: the proxy keeps it.
	base, account, _ := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(endpoint, "http://"), "https://"), "/")
	scheme := endpoint[:strings.Index(endpoint, "://")+3]
	// to is the connection string with its requests going to ep.
	to := func(ep string) string {
		return blobEndpoint.ReplaceAllLiteralString(connectionString, "BlobEndpoint="+strings.TrimSuffix(ep, "/")+"/"+account)
	}
	client := func(ep string) (*azblob.Client, error) {
		return azblob.NewClientFromConnectionString(to(ep), &azblob.ClientOptions{ClientOptions: policy.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}}})
	}
	admin, err := client(scheme + base)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", name, err)
	}
	if _, err := admin.CreateContainer(ctx, container, nil); err != nil {
		return nil, "", fmt.Errorf("%s: CreateContainer %s: %w", name, container, err)
	}
	return &store{
		name: name, service: pricing.AzureBlob, ttl: ttl, endpoint: scheme + base,
		connect: func(ep string) (opener, error) {
			c, err := client(ep)
			if err != nil {
				return nil, err
			}
			return func(ctx context.Context, n string, opts lease.Options) (lease.Lease, error) {
				return azurelease.Open(ctx, azurelease.Options{Container: container, Blob: n, Client: c}, opts)
			}, nil
		},
		objects: func(_ context.Context, ep, _, _ string) (shard.Store, error) {
			c, err := client(ep)
			if err != nil {
				return nil, err
			}
			return azurelease.NewObjects(azurelease.ObjectsOptions{Options: azurelease.Options{Container: container, Client: c}})
		},
		label: byBlobOperation,
		cli: func(ep, n string) (string, []string) {
			return "azblob://" + container + "/" + n + "?connection_string_env=LEASEBENCH_AZURE", []string{"LEASEBENCH_AZURE=" + to(ep)}
		},
		cleanup: func(ctx context.Context) {
			_, _ = admin.DeleteContainer(ctx, container, nil)
		},
	}, "", nil
}

// byBlobOperation labels an Azure Blob request: "HEAD" (Get Blob
// Properties), "PUT lease/renew", "PUT metadata", "PUT" (Put Blob).
func byBlobOperation(r *http.Request) string {
	label := r.Method
	if comp := r.URL.Query().Get("comp"); comp != "" {
		label += " " + comp
	}
	if action := r.Header.Get("X-Ms-Lease-Action"); action != "" {
		label += "/" + action
	}
	return label
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
