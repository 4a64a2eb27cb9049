# A least-privilege policy for leasehold workers: exactly the actions the
# backends declare (s3lease.IAMActions, s3lease.IAMProbeActions,
# s3lease.IAMBucketActions, dynamolease.IAMActions; for shard groups,
# s3lease.IAMActions, s3lease.IAMGroupActions and dynamolease.ObjectsGrant),
# each on the lease resources only. The action lists are
# written out here, and terraform/terraform_test.go checks them against the
# Go code: change them together.

locals {
  s3_enabled       = var.s3_bucket_arn != null
  dynamodb_enabled = var.dynamodb_table_arn != null
  # runner.CandidatesSuffix: with prefer, each lease's candidates' key
  # beside it (NAME.candidates), where leasehold run --prefer's instances
  # announce themselves and leasehold handoff asks, is granted as a lease
  # of its own, with its probe.
  candidates_suffix = ".candidates"
  s3_names          = concat(var.s3_lease_names, var.prefer ? [for n in var.s3_lease_names : "${n}${local.candidates_suffix}"] : [])
  dynamodb_names    = concat(var.dynamodb_lease_names, var.prefer ? [for n in var.dynamodb_lease_names : "${n}${local.candidates_suffix}"] : [])
  s3_lease_keys     = [for n in local.s3_names : "${var.s3_prefix}/${n}"]
  # Each shard group's key prefix: its objects' keys begin with it.
  s3_group_prefixes = [for g in var.s3_shard_groups : "${var.s3_prefix}/${g}/"]
  # s3lease.ProbeSuffix: the object next to each lease that leasehold reads
  # and writes, once per process and bucket, to check that the store
  # enforces conditional writes.
  s3_probe_suffix = ".leasehold-probe"
  s3_probe_keys   = [for k in local.s3_lease_keys : "${k}${local.s3_probe_suffix}"]
  # dynamodb's probe items are named the same way, in the lease table
  # (driver.ProbeSuffix).
  dynamodb_probe_names = [for n in local.dynamodb_names : "${n}${local.s3_probe_suffix}"]
  # A shard group's partitions: its items, its large objects' parts
  # (GROUP#parts) and its leases' probe items (GROUP.leasehold-probe).
  dynamodb_shard_partitions = flatten([for g in var.dynamodb_shard_groups : [g, "${g}#parts", "${g}${local.s3_probe_suffix}"]])
  # The region of the bucket, and of its KMS key: arn:aws:kms:REGION:...
  s3_kms_region = var.s3_kms_key_arn != null ? split(":", var.s3_kms_key_arn)[3] : null
}

data "aws_iam_policy_document" "this" {
  # s3lease.IAMActions on each lease object, named one by one.
  dynamic "statement" {
    for_each = local.s3_enabled && !var.s3_whole_prefix && length(local.s3_lease_keys) > 0 ? [1] : []
    content {
      sid       = "LeaseObjects"
      effect    = "Allow"
      actions   = ["s3:GetObject", "s3:PutObject"]
      resources = [for k in local.s3_lease_keys : "${var.s3_bucket_arn}/${k}"]
    }
  }

  # s3lease.IAMProbeActions on each lease's probe object (KEY.leasehold-probe).
  # Under a whole prefix, the statement below covers the probe objects too.
  dynamic "statement" {
    for_each = local.s3_enabled && !var.s3_whole_prefix && length(local.s3_lease_keys) > 0 ? [1] : []
    content {
      sid       = "LeaseProbeObjects"
      effect    = "Allow"
      actions   = ["s3:GetObject", "s3:PutObject"]
      resources = [for k in local.s3_probe_keys : "${var.s3_bucket_arn}/${k}"]
    }
  }

  # s3lease.IAMActions on every key under the prefix: only when asked for
  # (s3_whole_prefix), for workers that name their leases at run time. The
  # wildcard scopes the resource to the prefix; the actions stay exact.
  dynamic "statement" {
    for_each = local.s3_enabled && var.s3_whole_prefix ? [1] : []
    content {
      sid       = "LeaseObjectsUnderPrefix"
      effect    = "Allow"
      actions   = ["s3:GetObject", "s3:PutObject"]
      resources = ["${var.s3_bucket_arn}/${var.s3_prefix}/*"]
    }
  }

  # s3lease.IAMBucketActions on the bucket. Never called by leasehold: S3
  # answers a read of a missing key with 404 (not 403) only to a caller that
  # may list the bucket, and evaluates that with s3:prefix set to the key.
  # So the listing is limited to the lease keys and their probe objects
  # (a probe object read just after a lifecycle rule deleted it), or to
  # the prefix.
  dynamic "statement" {
    for_each = local.s3_enabled && (var.s3_whole_prefix || length(local.s3_lease_keys) > 0) ? [1] : []
    content {
      sid       = "LeaseBucket"
      effect    = "Allow"
      actions   = ["s3:ListBucket"]
      resources = [var.s3_bucket_arn]

      condition {
        test     = var.s3_whole_prefix ? "StringLike" : "StringEquals"
        variable = "s3:prefix"
        values   = var.s3_whole_prefix ? ["${var.s3_prefix}/*"] : concat(local.s3_lease_keys, local.s3_probe_keys)
      }
    }
  }

  # Shard groups (s3_shard_groups): s3lease.IAMActions on every key under
  # each group's prefix, whose names (the workers' identities) are chosen
  # at run time, and s3lease.IAMGroupActions on the bucket, to list
  # exactly the group's prefix (the assigner's ListObjectsV2).
  dynamic "statement" {
    for_each = local.s3_enabled && length(local.s3_group_prefixes) > 0 ? [1] : []
    content {
      sid       = "ShardGroupObjects"
      effect    = "Allow"
      actions   = ["s3:GetObject", "s3:PutObject"]
      resources = [for p in local.s3_group_prefixes : "${var.s3_bucket_arn}/${p}*"]
    }
  }

  dynamic "statement" {
    for_each = local.s3_enabled && length(local.s3_group_prefixes) > 0 ? [1] : []
    content {
      sid       = "ShardGroupList"
      effect    = "Allow"
      actions   = ["s3:ListBucket"]
      resources = [var.s3_bucket_arn]

      condition {
        test     = "StringEquals"
        variable = "s3:prefix"
        values   = local.s3_group_prefixes
      }
    }
  }

  # A customer-managed KMS key on the lease objects: S3 decrypts on
  # GetObject and asks for a data key on PutObject, as the caller, and only
  # through S3 in the bucket's region. S3 uses an SSE-KMS key only in the
  # bucket's own region, so that region is the key's (the ARN's fourth
  # field), whatever region the provider that applies this module is in.
  dynamic "statement" {
    for_each = var.s3_kms_key_arn != null ? [1] : []
    content {
      sid       = "LeaseObjectsKMS"
      effect    = "Allow"
      actions   = ["kms:Decrypt", "kms:GenerateDataKey"]
      resources = [var.s3_kms_key_arn]

      condition {
        test     = "StringEquals"
        variable = "kms:ViaService"
        values   = ["s3.${local.s3_kms_region}.amazonaws.com"]
      }
    }
  }

  # dynamolease.IAMActions on the table, optionally only on the lease items.
  dynamic "statement" {
    for_each = local.dynamodb_enabled ? [1] : []
    content {
      sid       = "LeaseTable"
      effect    = "Allow"
      actions   = ["dynamodb:DescribeTable", "dynamodb:GetItem", "dynamodb:PutItem"]
      resources = [var.dynamodb_table_arn]

      # ForAllValues: every partition key the request touches is a lease
      # name, or a lease's probe item (NAME.leasehold-probe). DescribeTable
      # names no key, so it passes (an empty set of keys satisfies
      # ForAllValues).
      dynamic "condition" {
        for_each = length(var.dynamodb_lease_names) > 0 ? [1] : []
        content {
          test     = "ForAllValues:StringEquals"
          variable = "dynamodb:LeadingKeys"
          values   = concat(local.dynamodb_names, local.dynamodb_probe_names)
        }
      }
    }
  }

  # dynamolease.ObjectsGrant on the shard groups' table, optionally only on
  # the groups' partitions.
  dynamic "statement" {
    for_each = var.dynamodb_shard_table_arn != null ? [1] : []
    content {
      sid       = "ShardTable"
      effect    = "Allow"
      actions   = ["dynamodb:DeleteItem", "dynamodb:DescribeTable", "dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:Query"]
      resources = [var.dynamodb_shard_table_arn]

      dynamic "condition" {
        for_each = length(var.dynamodb_shard_groups) > 0 ? [1] : []
        content {
          test     = "ForAllValues:StringEquals"
          variable = "dynamodb:LeadingKeys"
          values   = local.dynamodb_shard_partitions
        }
      }
    }
  }
}

resource "aws_iam_policy" "this" {
  name        = var.name
  path        = var.path
  description = "leasehold: read and write the lease objects/items, nothing else"
  policy      = data.aws_iam_policy_document.this.json
  tags        = var.tags
}

resource "aws_iam_role_policy_attachment" "this" {
  count      = var.role_name != null ? 1 : 0
  role       = var.role_name
  policy_arn = aws_iam_policy.this.arn
}
