# The DynamoDB table that holds leasehold's lease items (package
# lease/dynamolease): one item per lease, keyed by the lease name. Its key schema
# is exactly what the backend checks on Open: a single partition (HASH) key of
# type S named key_attribute, no sort key. Terraform never writes the items.
#
# No ttl block, on purpose: an item carries the lease's fencing counter and
# must never be deleted, and its ttl_ms attribute is a duration, not an expiry
# time, so DynamoDB TTL on it would delete live leases.

resource "aws_dynamodb_table" "this" {
  name         = var.table_name
  billing_mode = "PAY_PER_REQUEST"
  hash_key     = var.key_attribute

  attribute {
    name = var.key_attribute
    type = "S"
  }

  deletion_protection_enabled = var.deletion_protection_enabled

  point_in_time_recovery {
    enabled = var.point_in_time_recovery_enabled
  }

  server_side_encryption {
    enabled     = var.kms_key_arn != null
    kms_key_arn = var.kms_key_arn
  }

  tags = var.tags
}

# The table of shard groups (package shard on lease/dynamolease: Objects),
# only when shard_table_name is set: one partition per group, keyed by the
# group's name, with a sort key naming each item in the group (the workers'
# leases, their acknowledgements, the assignment), so that the assigner
# lists a group with one Query of its partition instead of a Scan of the
# whole lease table. Large objects' parts sit in partition GROUP#parts. No
# TTL, for the same reason as the lease table: the leases' items carry
# their fencing counters.
resource "aws_dynamodb_table" "shards" {
  count        = var.shard_table_name != null ? 1 : 0
  name         = var.shard_table_name
  billing_mode = "PAY_PER_REQUEST"
  hash_key     = "group"
  range_key    = "key"

  attribute {
    name = "group"
    type = "S"
  }

  attribute {
    name = "key"
    type = "S"
  }

  deletion_protection_enabled = var.deletion_protection_enabled

  point_in_time_recovery {
    enabled = var.point_in_time_recovery_enabled
  }

  server_side_encryption {
    enabled     = var.kms_key_arn != null
    kms_key_arn = var.kms_key_arn
  }

  tags = var.tags
}

locals {
  # dynamolease.DefaultKeyAttribute: only another key attribute is named in the
  # lease URLs.
  default_key_attribute = "lease"
  url_query             = var.key_attribute == local.default_key_attribute ? "" : "?key_attribute=${var.key_attribute}"
}
