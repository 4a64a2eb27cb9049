package s3lease_test

import (
	"testing"

	"github.com/leasehold/leasehold/lease/internal/emulators/s3emu"
	"github.com/leasehold/leasehold/lease/internal/storetest"
)

// target is one S3-compatible store under test, with a bucket of the
// test's own.
type target struct{ *s3emu.Store }

// targets are the stores the integration tests run against: MinIO and moto
// from the local test stack, whose subtests skip, naming the variable, when
// it is not set, and a real account's when one is configured (see
// s3emu.Targets).
var targets = storetest.Wrap(s3emu.Targets(), func(s *s3emu.Store) *target { return &target{s} })

func TestMain(m *testing.M) { storetest.Main(m) }
