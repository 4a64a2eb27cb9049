package azurelease_test

import (
	"flag"
	"os"
	"strconv"
	"testing"
)

// realTimeParallel is how many tests and subtests run at once unless go
// test's -parallel says otherwise. The integration tests spend nearly all
// their time waiting for Azure leases to lapse (15s each), not computing,
// so go test's default (GOMAXPROCS, 2 on a small CI machine) would
// serialise the conformance suite into several minutes of sleeping.
const realTimeParallel = 64

func TestMain(m *testing.M) {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		_ = flag.Set("test.parallel", strconv.Itoa(realTimeParallel))
	}
	os.Exit(m.Run())
}
