package pricing

import (
	"math"
	"strconv"
	"strings"
	"testing"
)

func TestMonthly(t *testing.T) {
	for _, tc := range []struct {
		name    string
		svc     Service
		perHour map[string]float64
		want    float64
	}{
		{"S3 leader", S3, map[string]float64{"PUT": 720}, 720 * 0.005 / 1000 * 730},
		{"S3 follower", S3, map[string]float64{"GET": 656}, 656 * 0.0004 / 1000 * 730},
		{"DynamoDB leader", DynamoDB, map[string]float64{"PutItem": 720, "DescribeTable": 1}, 720 * 0.625 / 1e6 * 730},
		{"DynamoDB follower", DynamoDB, map[string]float64{"GetItem": 648}, 648 * 0.125 / 1e6 * 730},
		{"Azure", AzureBlob, map[string]float64{"PUT lease/renew": 720, "HEAD": 10}, 730 * 0.0044 / 1e4 * 730},
		{"Cloud Storage", GCS, map[string]float64{"POST": 708, "GET": 660}, (708*0.005/1000 + 660*0.0004/1000) * 730},
		{"memory", Memory, map[string]float64{"write": 712}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.svc.Monthly(tc.perHour); math.Abs(got-tc.want) > 1e-9 {
				t.Errorf("%v.Monthly(%v) = %v, want %v", tc.svc, tc.perHour, got, tc.want)
			}
		})
	}
}

func TestPrices(t *testing.T) {
	want := "S3 Standard PUT $0.005 and GET $0.0004 per 1,000; DynamoDB on-demand $0.625 per million WRU, $0.125 per million RRU; " +
		"Azure Blob Hot LRS other operations $0.0044 per 10,000; Cloud Storage Standard (region) Class A $0.005 and Class B $0.0004 per 1,000 " +
		"(pricing pages, as of 2026); 730 hours a month"
	if got := Prices(); got != want {
		t.Errorf("Prices() =\n%s\nwant\n%s", got, want)
	}
}

// TestDollars: cents, four decimals below a cent, and two significant
// digits below a hundredth of a cent (a lease renewed once in days), never
// "$0.0000" for an amount that is not 0.
func TestDollars(t *testing.T) {
	for d, want := range map[float64]string{0: "$0", 2.336: "$2.34", 0.00056: "$0.0006", 9.73e-6: "$0.0000097", 1.56e-6: "$0.0000016"} {
		if got := Dollars(d); got != want {
			t.Errorf("Dollars(%v) = %q, want %q", d, got, want)
		}
		if got := "$" + strconv.FormatFloat(Round(d), 'f', -1, 64); strings.TrimRight(got, "0") != strings.TrimRight(want, "0") {
			t.Errorf("Round(%v) = %s, want %s as Dollars prints it", d, got, want)
		}
	}
}

// TestLookup: every Service is found by its name; an unknown name is not.
func TestLookup(t *testing.T) {
	for _, s := range []Service{Memory, S3, DynamoDB, AzureBlob, GCS} {
		if got, ok := Lookup(s.String()); !ok || got != s {
			t.Errorf("Lookup(%q) = %v, %t; want %v", s.String(), got, ok, s)
		}
	}
	if _, ok := Lookup("Amazon S3"); ok {
		t.Error(`Lookup("Amazon S3") found a Service`)
	}
}
