# A quorum lease (lease/quorumlease) over three stores in three AWS regions:
# an S3 bucket in each (backend = "s3", module aws-s3-lease) or a DynamoDB
# table in each (backend = "dynamodb", module aws-dynamodb-lease). The
# leader keeps its term while any two of the three answer, so one region's
# S3 or DynamoDB outage neither stops it nor makes anyone else leader. One
# role, the workers', may read and write the lease in each of the three
# stores and nothing else: the policy of module aws-lease-iam once per
# member, all attached to it.

# IAM is global: the policies and the role are made through this provider,
# in the first member's region.
provider "aws" {
  region = var.regions[0]

  default_tags {
    tags = var.tags
  }
}

# One provider per member, each in its member's region. Terraform cannot
# iterate over providers, so each member has its own module block below.
provider "aws" {
  alias  = "member_1"
  region = var.regions[0]

  default_tags {
    tags = var.tags
  }
}

provider "aws" {
  alias  = "member_2"
  region = var.regions[1]

  default_tags {
    tags = var.tags
  }
}

provider "aws" {
  alias  = "member_3"
  region = var.regions[2]

  default_tags {
    tags = var.tags
  }
}

data "aws_caller_identity" "current" {}

locals {
  s3_prefix  = "leases"
  table_name = "${var.name}-leases"
  # One bucket per region, BUCKET_PREFIX-REGION (none without a prefix:
  # backend = "dynamodb").
  bucket_names = [for r in var.regions : var.bucket_prefix == null ? null : "${var.bucket_prefix}-${r}"]
  # The members' stores in the quorum's order, which is var.regions': the
  # modules of the backend not chosen have no instance. Every worker must
  # list the members in the same order, so every worker takes lease_url.
  stores = concat(
    [for m in flatten([module.s3_member_1, module.s3_member_2, module.s3_member_3]) : { bucket_arn = m.bucket_arn, table_arn = null, url = m.lease_urls[var.lease_name] }],
    [for m in flatten([module.dynamodb_member_1, module.dynamodb_member_2, module.dynamodb_member_3]) : { bucket_arn = null, table_arn = m.table_arn, url = m.lease_urls[var.lease_name] }],
  )
  # Each member's URL names its store's region: a worker in any region
  # reaches all three. (The modules' URLs carry no query of their own at
  # their default key attribute.)
  member_urls = [for i, s in local.stores : "${s.url}?region=${var.regions[i]}"]
  lease_url   = "quorum:${join(",", local.member_urls)}"
  role_name   = var.role_name != null ? var.role_name : aws_iam_role.task[0].name
}

# ---- the members: a bucket, or a table, in each region ----------------------------

module "s3_member_1" {
  source    = "../../modules/aws-s3-lease"
  count     = var.backend == "s3" ? 1 : 0
  providers = { aws = aws.member_1 }

  bucket_name   = local.bucket_names[0]
  prefix        = local.s3_prefix
  lease_names   = [var.lease_name]
  force_destroy = var.force_destroy
}

module "s3_member_2" {
  source    = "../../modules/aws-s3-lease"
  count     = var.backend == "s3" ? 1 : 0
  providers = { aws = aws.member_2 }

  bucket_name   = local.bucket_names[1]
  prefix        = local.s3_prefix
  lease_names   = [var.lease_name]
  force_destroy = var.force_destroy
}

module "s3_member_3" {
  source    = "../../modules/aws-s3-lease"
  count     = var.backend == "s3" ? 1 : 0
  providers = { aws = aws.member_3 }

  bucket_name   = local.bucket_names[2]
  prefix        = local.s3_prefix
  lease_names   = [var.lease_name]
  force_destroy = var.force_destroy
}

# Three tables of one name in three regions: three stores (never a global
# table, which is one eventually consistent store and which dynamolease
# refuses).
module "dynamodb_member_1" {
  source    = "../../modules/aws-dynamodb-lease"
  count     = var.backend == "dynamodb" ? 1 : 0
  providers = { aws = aws.member_1 }

  table_name                  = local.table_name
  lease_names                 = [var.lease_name]
  deletion_protection_enabled = !var.force_destroy
}

module "dynamodb_member_2" {
  source    = "../../modules/aws-dynamodb-lease"
  count     = var.backend == "dynamodb" ? 1 : 0
  providers = { aws = aws.member_2 }

  table_name                  = local.table_name
  lease_names                 = [var.lease_name]
  deletion_protection_enabled = !var.force_destroy
}

module "dynamodb_member_3" {
  source    = "../../modules/aws-dynamodb-lease"
  count     = var.backend == "dynamodb" ? 1 : 0
  providers = { aws = aws.member_3 }

  table_name                  = local.table_name
  lease_names                 = [var.lease_name]
  deletion_protection_enabled = !var.force_destroy
}

# ---- the workers' role and its grants -----------------------------------------------

# The lease in each member's store, exactly, and nothing else: one policy
# per member (the module takes one bucket or table), all attached to the
# one role. A policy edited wrongly then denies one member, a minority.
module "lease_iam" {
  source   = "../../modules/aws-lease-iam"
  for_each = { for i, s in local.stores : "member-${i + 1}" => s }

  name                 = "${var.name}-lease-${each.key}"
  s3_bucket_arn        = each.value.bucket_arn
  s3_prefix            = local.s3_prefix
  s3_lease_names       = [var.lease_name]
  dynamodb_table_arn   = each.value.table_arn
  dynamodb_lease_names = [var.lease_name]
  role_name            = local.role_name
}

data "aws_iam_policy_document" "ecs_tasks_assume" {
  statement {
    sid     = "EcsTasksOfThisAccount"
    effect  = "Allow"
    actions = ["sts:AssumeRole"]

    principals {
      type        = "Service"
      identifiers = ["ecs-tasks.amazonaws.com"]
    }

    condition {
      test     = "StringEquals"
      variable = "aws:SourceAccount"
      values   = [data.aws_caller_identity.current.account_id]
    }
  }
}

# The workers' role, for ECS tasks, unless role_name names one of yours.
resource "aws_iam_role" "task" {
  count = var.role_name == null ? 1 : 0

  name               = "${var.name}-task"
  assume_role_policy = data.aws_iam_policy_document.ecs_tasks_assume.json
}
