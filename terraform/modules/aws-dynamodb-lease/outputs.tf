output "table_name" {
  description = "Name of the lease table."
  value       = aws_dynamodb_table.this.name
}

output "table_arn" {
  description = "ARN of the lease table: the resource of dynamolease.IAMActions."
  value       = aws_dynamodb_table.this.arn
}

output "key_attribute" {
  description = "Name of the table's partition key."
  value       = aws_dynamodb_table.this.hash_key
}

output "lease_urls" {
  description = "leasehold URL of each lease in lease_names (dynamodb://TABLE/NAME), by lease name: pass one to lease.Open, or to leasehold run --lease (LEASEHOLD_LEASE). Add region=REGION to the query when the workers' default region differs from the table's."
  value       = { for n in var.lease_names : n => "dynamodb://${aws_dynamodb_table.this.name}/${n}${local.url_query}" }
}

output "shard_table_name" {
  description = "Name of the shard groups' table, or null when shard_table_name was not set: dynamolease.ObjectsOptions.Table."
  value       = one(aws_dynamodb_table.shards[*].name)
}

output "shard_table_arn" {
  description = "ARN of the shard groups' table, or null: the resource of dynamolease.ObjectsGrant (aws-lease-iam's dynamodb_shard_table_arn)."
  value       = one(aws_dynamodb_table.shards[*].arn)
}
