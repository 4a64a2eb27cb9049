// Package pricing holds the list prices of the stores' requests, once, for
// leasebench's cost table and leasehold check's cost line.
package pricing

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// List prices per request, from the providers' public pricing pages, as of
// 2026: Amazon S3 Standard and DynamoDB on-demand in us-east-1, Azure Blob
// Storage Hot LRS, Google Cloud Storage Standard in a region. Update them
// here; the cost table of docs/benchmarks.md comes from leasebench's output.
const (
	// Amazon S3 pricing page (https://aws.amazon.com/s3/pricing/), S3
	// Standard: PUT, COPY, POST, LIST requests $0.005 per 1,000; GET,
	// SELECT and all other requests $0.0004 per 1,000.
	s3PutPrice = 0.005 / 1_000
	s3GetPrice = 0.0004 / 1_000

	// Amazon DynamoDB pricing page, on-demand
	// (https://aws.amazon.com/dynamodb/pricing/on-demand/): $0.625 per
	// million write request units, $0.125 per million read request units.
	// A lease item is well under 1 KB, so a PutItem (also one whose
	// condition fails) is 1 WRU and a strongly consistent GetItem (up to
	// 4 KB) 1 RRU. DescribeTable is not charged.
	dynamoWritePrice = 0.625 / 1_000_000
	dynamoReadPrice  = 0.125 / 1_000_000

	// Azure Blob Storage pricing page
	// (https://azure.microsoft.com/pricing/details/storage/blobs/), Hot
	// LRS: "all other operations" $0.0044 per 10,000, the class of Get Blob
	// Properties, Lease Blob and Set Blob Metadata on a standard
	// general-purpose v2 account ("Map each REST operation to a price",
	// https://learn.microsoft.com/azure/storage/blobs/map-rest-apis-transaction-categories),
	// which are all a lease does between elections. (Put Blob, a write
	// operation priced higher, comes once per blob, and is priced here as
	// the others.)
	azureOperationPrice = 0.0044 / 10_000

	// Google Cloud Storage pricing page
	// (https://cloud.google.com/storage/pricing#operations-pricing, and its
	// worked example, https://cloud.google.com/storage/pricing-examples),
	// Standard storage in a region: Class A operations (an upload, any
	// write) $0.005 per 1,000, Class B operations (a read of an object)
	// $0.0004 per 1,000. In a multi-region or dual-region bucket Class A
	// costs twice as much.
	gcsClassAPrice = 0.005 / 1_000
	gcsClassBPrice = 0.0004 / 1_000

	// HoursPerMonth is the month of cloud pricing pages: 730 hours.
	HoursPerMonth = 730
)

// Service is a store whose requests cost money (or, Memory, do not).
type Service int

const (
	// Memory is leasehold's in-process store: free.
	Memory Service = iota
	// S3 is Amazon S3 Standard.
	S3
	// DynamoDB is Amazon DynamoDB on demand.
	DynamoDB
	// AzureBlob is Azure Blob Storage, Hot LRS.
	AzureBlob
	// GCS is Google Cloud Storage, Standard.
	GCS
)

// names are the Services' names, by Service.
var names = [...]string{"memory", "S3", "DynamoDB", "Azure Blob", "Cloud Storage"}

// String names the service as its pricing page does: "Cloud Storage".
func (s Service) String() string { return names[s] }

// Lookup returns the Service named name (as String names it, and as a
// backend's driver.Store names its price list in Price.Service).
func Lookup(name string) (Service, bool) {
	for s, n := range names {
		if n == name {
			return Service(s), true
		}
	}
	return 0, false
}

// PerRequest is the list price in dollars of one request of s, labelled op
// as leasebench's counting proxy labels them: the HTTP method for S3
// ("PUT", "GET") and Cloud Storage ("POST" uploads, "GET" reads), the
// operation for DynamoDB ("PutItem", "GetItem", "DescribeTable"); every
// Azure Blob request is priced alike.
func (s Service) PerRequest(op string) float64 {
	switch s {
	case S3:
		if op == "PUT" || op == "POST" {
			return s3PutPrice
		}
		return s3GetPrice
	case DynamoDB:
		switch op {
		case "GetItem":
			return dynamoReadPrice
		case "DescribeTable":
			return 0
		}
		return dynamoWritePrice
	case AzureBlob:
		return azureOperationPrice
	case GCS:
		if op == "GET" {
			return gcsClassBPrice
		}
		return gcsClassAPrice
	}
	return 0
}

// Monthly is the cost in dollars of a month (HoursPerMonth) of requests
// made at perHour, by operation label (see PerRequest).
func (s Service) Monthly(perHour map[string]float64) float64 {
	var dollars float64
	for op, n := range perHour {
		dollars += n * s.PerRequest(op)
	}
	return dollars * HoursPerMonth
}

// Prices lists the prices above in one sentence, for reports.
func Prices() string {
	return fmt.Sprintf("S3 Standard PUT $%.4g and GET $%.4g per 1,000; DynamoDB on-demand $%.4g per million WRU, $%.4g per million RRU; "+
		"Azure Blob Hot LRS other operations $%.4g per 10,000; Cloud Storage Standard (region) Class A $%.4g and Class B $%.4g per 1,000 "+
		"(pricing pages, as of 2026); %d hours a month",
		s3PutPrice*1e3, s3GetPrice*1e3, dynamoWritePrice*1e6, dynamoReadPrice*1e6, azureOperationPrice*1e4, gcsClassAPrice*1e3, gcsClassBPrice*1e3, HoursPerMonth)
}

// Dollars formats an amount of dollars: cents, four decimals below one
// cent, and two significant digits below a hundredth of a cent.
func Dollars(d float64) string {
	switch {
	case d == 0:
		return "$0"
	case d < 0.0001:
		return fmt.Sprintf("$%.*f", 1-int(math.Floor(math.Log10(d))), d)
	case d < 0.01:
		return fmt.Sprintf("$%.4f", d)
	}
	return fmt.Sprintf("$%.2f", d)
}

// Round rounds an amount of dollars as Dollars prints it: 2.34 for
// 2.3360000000000003, what float arithmetic makes of 640 × 730 × $0.000005.
func Round(d float64) float64 {
	r, _ := strconv.ParseFloat(strings.TrimPrefix(Dollars(d), "$"), 64)
	return r
}
