package mixed_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/internal/awstest"
	"github.com/leasehold/leasehold/lease/internal/emulators/azureemu"
	"github.com/leasehold/leasehold/lease/internal/emulators/dynamoemu"
	"github.com/leasehold/leasehold/lease/internal/emulators/gcsemu"
	"github.com/leasehold/leasehold/lease/internal/emulators/s3emu"
	"github.com/leasehold/leasehold/lease/internal/storetest"
	"github.com/leasehold/leasehold/lease/quorumlease"
)

// TestMain warms Azurite up, then raises -parallel (see storetest.Main):
// the suites wait on TTLs, not on the CPU.
func TestMain(m *testing.M) {
	azureemu.WarmUp()
	storetest.Main(m)
}

// TestConformance runs the conformance suite on a quorum of three
// emulators of different clouds, each lease quorumlease.New over one lease
// per member. Each mix skips, naming the variable, when one of its
// emulators is not configured. Azurite's shortest lease sets the second
// mix's TTL at 15s, so its longest subtests wait about a minute. The mixes
// run one after the other: each suite's subtests run in parallel, and a
// quorum's follower reads every member at each try, so that two suites at
// once, on a loaded machine, spaced a follower's reads wider than its
// count of an unchanged record allows (rule 2) and took over late.
func TestConformance(t *testing.T) {
	t.Run("MinIO+dynalite+GCS", func(t *testing.T) {
		storetest.RunConformance(t, quorumOf(s3emu.MinIO(t).Conformance(), dynamoemu.Dynalite(t).Conformance(), gcsemu.New(t).Conformance(t)))
	})
	t.Run("Azurite+MinIO+moto", func(t *testing.T) {
		storetest.RunConformance(t, quorumOf(azureemu.New(t).Conformance(), s3emu.MinIO(t).Conformance(), dynamoemu.Moto(t).Conformance()))
	})
}

// TestConformanceURL runs the conformance suite on the quorum of MinIO,
// dynalite and fake-gcs-server opened with lease.Open from a "quorum:" URL
// of the members' URLs, each naming its emulator's endpoint. The AWS
// members sign with MinIO's keys, from the environment (dynalite checks
// none): so the test sets it, and does not run in parallel.
func TestConformanceURL(t *testing.T) {
	minio, dynalite, gcs := s3emu.MinIO(t), dynamoemu.Dynalite(t), gcsemu.New(t)
	awstest.IsolateEnv(t)
	t.Setenv("AWS_ACCESS_KEY_ID", minio.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", minio.Secret)
	h := quorumOf(minio.Conformance(), dynalite.Conformance(), gcs.Conformance(t))
	h.OpenLease = func(ctx context.Context, name string, opts lease.Options) (lease.Lease, error) {
		return lease.Open(ctx, quorumlease.Scheme+":"+minio.URL(name)+","+dynalite.URL(name)+","+gcs.URL(name), opts)
	}
	storetest.RunConformance(t, h)
}

// quorumTTL is the shortest TTL of a mixed quorum: three times a single
// store's in the suite, since a quorum's follower reads three stores at
// each try, and on a loaded machine reads spaced wider than the renew
// interval restart its count (rule 2): at 3s, the suite's takeovers came
// late under load.
const quorumTTL = 3 * storetest.ConformanceTTL

// quorumOf is the conformance suite's harness on a quorum of the members'
// stores: a lease is quorumlease.New over the lease of each member, all
// opened with the longest of the members' TTLs and CallTimeouts (each is
// the shortest its store allows or needs); a foreign record is written to,
// and a record deleted from, every member.
func quorumOf(members ...*storetest.Harness) *storetest.Harness {
	q := &storetest.Harness{}
	for _, m := range members {
		q.TTL = max(q.TTL, m.TTL, quorumTTL)
		q.CallTimeout = max(q.CallTimeout, m.CallTimeout)
	}
	q.OpenLease = func(ctx context.Context, name string, opts lease.Options) (lease.Lease, error) {
		leases := make([]lease.Lease, len(members))
		for i, m := range members {
			l, err := m.Open(ctx, name, opts)
			if err != nil {
				return nil, fmt.Errorf("member %d: %w", i+1, err)
			}
			leases[i] = l
		}
		return quorumlease.New(leases, nil)
	}
	q.Foreign = func(ctx context.Context, name string) error {
		for i, m := range members {
			if err := m.WriteForeign(ctx, name); err != nil {
				return fmt.Errorf("member %d: %w", i+1, err)
			}
		}
		return nil
	}
	q.Remove = func(ctx context.Context, name string) error {
		for i, m := range members {
			if err := m.Delete(ctx, name); err != nil {
				return fmt.Errorf("member %d: %w", i+1, err)
			}
		}
		return nil
	}
	return q
}
