output "bucket_name" {
  description = "Name of the bucket that holds the lease objects."
  value       = local.bucket_name
}

output "bucket_arn" {
  description = "ARN of the bucket (arn:aws:s3:::BUCKET): the resource of s3lease.IAMBucketActions."
  value       = local.bucket_arn
}

output "prefix" {
  description = "Key prefix of the lease objects, without trailing slash."
  value       = var.prefix
}

output "lease_keys" {
  description = "Object key of each lease in lease_names (PREFIX/NAME), by lease name."
  value       = local.lease_keys
}

output "lease_urls" {
  description = "leasehold URL of each lease in lease_names (s3://BUCKET/PREFIX/NAME), by lease name: pass one to lease.Open, or to leasehold run --lease (LEASEHOLD_LEASE). Add ?region=REGION when the workers' default region differs from the bucket's."
  value       = { for n, k in local.lease_keys : n => "s3://${local.bucket_name}/${k}" }
}

output "lease_object_arns" {
  description = "ARN of each lease object (arn:aws:s3:::BUCKET/PREFIX/NAME), by lease name: the resources of s3lease.IAMActions."
  value       = { for n, k in local.lease_keys : n => "${local.bucket_arn}/${k}" }
}

output "url_prefix" {
  description = "URL prefix of this bucket's leases (s3://BUCKET/PREFIX/): append a lease name for a lease not listed in lease_names."
  value       = "s3://${local.bucket_name}/${var.prefix}/"
}
