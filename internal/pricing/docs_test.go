package pricing_test

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/leasehold/leasehold/internal/pricing"
	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/azurelease"
	"github.com/leasehold/leasehold/lease/driver"
	"github.com/leasehold/leasehold/lease/dynamolease"
	"github.com/leasehold/leasehold/lease/gcslease"
	"github.com/leasehold/leasehold/lease/s3lease"
	"github.com/leasehold/leasehold/runner"
)

// TestDocumentedCosts derives the cost figures that the S3 page of the docs
// (docs/backends/s3.md) and the backends' package docs state from the prices here and the runner's
// defaults, and checks that they say them: a change of a price or of a
// default that the docs do not follow fails here.
func TestDocumentedCosts(t *testing.T) {
	renewals := float64(time.Hour / runner.DefaultRenewInterval(lease.DefaultTTL)) // a leader's PUTs an hour
	reads := renewals * runner.DefaultFollowerReads                                // a follower's GETs an hour
	// The store's check, once per process and bucket, on a bucket whose
	// probe object exists: three conditional PUTs and a GET (lease/driver's
	// TestProbe counts the writes), for a run started every minute.
	check := 3*pricing.S3.PerRequest("PUT") + pricing.S3.PerRequest("GET")
	runs := 60.0 * pricing.HoursPerMonth
	want := []string{
		fmt.Sprintf("%s PUT", thousands(renewals)),
		fmt.Sprintf("%s GET", thousands(reads)),
		pricing.Dollars(pricing.S3.Monthly(map[string]float64{"PUT": renewals})),
		pricing.Dollars(pricing.S3.Monthly(map[string]float64{"GET": reads})),
		fmt.Sprintf("about %s a month for a `leasehold run --once` started every minute", pricing.Dollars(check*runs)),
	}
	t.Logf("at TTL %v: leader %v PUT/h, follower %v GET/h; a run every minute: %v runs a month, %s of checks", lease.DefaultTTL, renewals, reads, runs, pricing.Dollars(check*runs))
	for _, doc := range []string{"../../docs/backends/s3.md", "../../lease/s3lease/doc.go"} {
		says(t, doc, want...)
	}

	// The other backends' docs: a leader's month (on Azure, each renewal
	// and the metadata write that shows it), and a follower's, who reads
	// as often per renewal as the store asks (twice, six times on Azure),
	// and the follower's reads an hour.
	for _, b := range []struct {
		doc   string
		store driver.Store
	}{
		{"../../lease/dynamolease/doc.go", dynamolease.Description},
		{"../../lease/gcslease/doc.go", gcslease.Description},
		{"../../lease/azurelease/doc.go", azurelease.Description},
	} {
		svc, reads := pollRate(t, b.store)
		leader := map[string]float64{b.store.Price.Renew: renewals}
		if show := b.store.Price.Show; show != "" {
			leader[show] = renewals
		}
		says(t, b.doc, pricing.Dollars(svc.Monthly(leader))+" a month", pricing.Dollars(svc.Monthly(map[string]float64{b.store.Price.Poll: reads}))+" a month", thousands(reads))
	}
}

// TestQuorumCostsDocumented derives the figures of the quorum page's cost
// table (docs/backends/quorum.md) as leasehold check sums a quorum's
// members: three times one lease's requests, and three times one lease's
// dollars as check rounds them, on S3 and on DynamoDB; and the
// single-lease figures the page multiplies.
func TestQuorumCostsDocumented(t *testing.T) {
	const members = 3
	renewals := float64(time.Hour / runner.DefaultRenewInterval(lease.DefaultTTL))
	var want []string
	for _, b := range []struct {
		store        driver.Store
		renew, reads string // what the page calls one lease's requests
	}{
		{s3lease.Description, "PUT/h", "GET/h"},
		{dynamolease.Description, "writes/h", "reads/h"},
	} {
		svc, reads := pollRate(t, b.store)
		leader := pricing.Round(svc.Monthly(map[string]float64{b.store.Price.Renew: renewals}))
		follower := pricing.Round(svc.Monthly(map[string]float64{b.store.Price.Poll: reads}))
		want = append(want,
			fmt.Sprintf("%s %s, %s", thousands(renewals), b.renew, pricing.Dollars(leader)),
			fmt.Sprintf("%s %s, %s", thousands(reads), b.reads, pricing.Dollars(follower)),
			fmt.Sprintf("| %s %s | %s | %s %s | %s | %s |",
				thousands(members*renewals), b.store.Price.Renew, pricing.Dollars(members*leader),
				thousands(members*reads), b.store.Price.Poll, pricing.Dollars(members*follower),
				pricing.Dollars(members*leader+2*members*follower)))
	}
	says(t, "../../docs/backends/quorum.md", want...)
}

// pollRate returns a store's prices and how many reads a follower makes
// an hour at the defaults, as often per renewal as the store asks (twice,
// six times on Azure).
func pollRate(t *testing.T, store driver.Store) (pricing.Service, float64) {
	t.Helper()
	svc, ok := pricing.Lookup(store.Price.Service)
	if !ok {
		t.Fatalf("no prices for %s", store.Price.Service)
	}
	timing, err := runner.Config{FollowerReads: store.FollowerReads}.Resolve(lease.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return svc, float64(time.Hour / timing.FollowerReadInterval(store.RenewalsShow()))
}

// says checks that the file doc (a package doc's comment markers and line
// breaks aside) says each of want.
func says(t *testing.T, doc string, want ...string) {
	t.Helper()
	b, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(strings.ReplaceAll(string(b), "\n//", "\n")), " ")
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("%s does not say %q", doc, w)
		}
	}
}

// thousands formats n, a whole number, with a comma between thousands:
// "1,280".
func thousands(n float64) string {
	s := fmt.Sprintf("%.0f", n)
	if len(s) > 3 {
		s = s[:len(s)-3] + "," + s[len(s)-3:]
	}
	return s
}
