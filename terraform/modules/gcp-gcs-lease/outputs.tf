output "bucket_name" {
  description = "Name of the bucket that holds the lease objects."
  value       = local.bucket
}

output "prefix" {
  description = "Prefix of the lease objects' names: lease NAME is PREFIX/NAME."
  value       = var.prefix
}

output "role_name" {
  description = "Full name of the custom role (projects/PROJECT/roles/ROLE_ID), holding exactly gcslease.IAMPermissions."
  value       = google_project_iam_custom_role.lease.name
}

output "iam_condition" {
  description = "The IAM condition that limits the grant to the lease objects."
  value       = google_storage_bucket_iam_member.lease.condition[0].expression
}

output "shard_group_urls" {
  description = "leasehold URL of each shard group in shard_groups (gs://BUCKET/PREFIX/GROUP), by group name: pass one to shard.OpenStore, or to leasehold run --shards --lease."
  value       = { for g in var.shard_groups : g => "gs://${local.bucket}/${var.prefix}/${g}" }
}

output "lease_urls" {
  description = "leasehold URL of each lease in lease_names (gs://BUCKET/PREFIX/NAME), by lease name: pass one to lease.Open, or to leasehold run --lease (LEASEHOLD_LEASE)."
  value       = { for n in var.lease_names : n => "gs://${local.bucket}/${var.prefix}/${n}" }
}
