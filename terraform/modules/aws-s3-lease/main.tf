# The S3 bucket (or a prefix in an existing one) that holds leasehold's lease
# objects (package lease/s3lease). Terraform never creates, reads or deletes the
# objects: leasehold creates each on first acquisition, with a conditional put,
# and never deletes it (it carries the lease's fencing counter).

data "aws_s3_bucket" "existing" {
  count  = var.create_bucket ? 0 : 1
  bucket = var.bucket_name
}

resource "aws_s3_bucket" "this" {
  count         = var.create_bucket ? 1 : 0
  bucket        = var.bucket_name
  force_destroy = var.force_destroy
  tags          = var.tags
}

# ACLs off: the bucket owner owns every object, access is by policy only.
resource "aws_s3_bucket_ownership_controls" "this" {
  count  = var.create_bucket ? 1 : 0
  bucket = aws_s3_bucket.this[0].id

  rule {
    object_ownership = "BucketOwnerEnforced"
  }
}

resource "aws_s3_bucket_public_access_block" "this" {
  count  = var.create_bucket ? 1 : 0
  bucket = aws_s3_bucket.this[0].id

  block_public_acls       = true
  block_public_policy     = true
  ignore_public_acls      = true
  restrict_public_buckets = true
}

resource "aws_s3_bucket_server_side_encryption_configuration" "this" {
  count  = var.create_bucket ? 1 : 0
  bucket = aws_s3_bucket.this[0].id

  rule {
    apply_server_side_encryption_by_default {
      sse_algorithm     = var.sse_algorithm
      kms_master_key_id = var.sse_algorithm == "aws:kms" ? var.kms_key_arn : null
    }
    # With KMS, a bucket key saves one KMS request per renewal.
    bucket_key_enabled = var.sse_algorithm == "aws:kms"
  }
}

# Versioning stays off unless asked for: leasehold needs none of it.
resource "aws_s3_bucket_versioning" "this" {
  count  = var.create_bucket && var.versioning_enabled ? 1 : 0
  bucket = aws_s3_bucket.this[0].id

  versioning_configuration {
    status = "Enabled"
  }
}

# Every renewal is a new version: expire the noncurrent ones. Never add an
# expiration or a transition of current objects here: the lease objects
# carry the fencing counters, and an expired one restarts them at 1 in every
# process started afterwards (terraform_test.go checks).
resource "aws_s3_bucket_lifecycle_configuration" "this" {
  count  = var.create_bucket && var.versioning_enabled ? 1 : 0
  bucket = aws_s3_bucket.this[0].id

  rule {
    id     = "expire-noncurrent-lease-versions"
    status = "Enabled"

    filter {
      prefix = "${var.prefix}/"
    }

    noncurrent_version_expiration {
      noncurrent_days = var.noncurrent_version_expiration_days
    }
  }

  depends_on = [aws_s3_bucket_versioning.this]
}

# TLS only: deny every request to the bucket and its objects made without
# TLS. A Deny takes permissions away, so its wildcards grant nothing.
data "aws_iam_policy_document" "tls_only" {
  count = var.create_bucket ? 1 : 0

  statement {
    sid       = "DenyInsecureTransport"
    effect    = "Deny"
    actions   = ["s3:*"]
    resources = [aws_s3_bucket.this[0].arn, "${aws_s3_bucket.this[0].arn}/*"]

    principals {
      type        = "*"
      identifiers = ["*"]
    }

    condition {
      test     = "Bool"
      variable = "aws:SecureTransport"
      values   = ["false"]
    }
  }
}

resource "aws_s3_bucket_policy" "this" {
  count  = var.create_bucket ? 1 : 0
  bucket = aws_s3_bucket.this[0].id
  policy = data.aws_iam_policy_document.tls_only[0].json

  # S3 refuses policy changes while the public access block is being set.
  depends_on = [aws_s3_bucket_public_access_block.this]
}

locals {
  bucket_name = var.create_bucket ? aws_s3_bucket.this[0].id : data.aws_s3_bucket.existing[0].id
  bucket_arn  = var.create_bucket ? aws_s3_bucket.this[0].arn : data.aws_s3_bucket.existing[0].arn
  lease_keys  = { for n in var.lease_names : n => "${var.prefix}/${n}" }
}
