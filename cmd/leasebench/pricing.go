package main

// List prices per request, from the providers' public pricing pages, as of
// 2026: Amazon S3 Standard and DynamoDB on-demand in us-east-1, Azure Blob
// Storage Hot LRS, Google Cloud Storage Standard in a region. Update them here; the README's cost table comes from
// leasebench's output.
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
	// Properties and Lease Blob, which are all a lease does between
	// elections. (An acquisition's Set Blob Metadata is a write operation,
	// priced higher, but it comes once per election, not per renewal, and
	// is priced here as the others.)
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

	// hoursPerMonth is the month of cloud pricing pages: 730 hours.
	hoursPerMonth = 730
)

// costPerHour prices requests per hour, by operation label, of svc.
func costPerHour(svc service, perHour map[string]float64) float64 {
	var dollars float64
	for op, n := range perHour {
		var price float64
		switch svc {
		case s3Service:
			price = s3GetPrice
			if op == "PUT" || op == "POST" {
				price = s3PutPrice
			}
		case dynamoService:
			switch op {
			case "GetItem":
				price = dynamoReadPrice
			case "DescribeTable":
			default:
				price = dynamoWritePrice
			}
		case azureService:
			price = azureOperationPrice
		case gcsService:
			price = gcsClassBPrice
			if op != "GET" {
				price = gcsClassAPrice
			}
		}
		dollars += n * price
	}
	return dollars
}
