variable "name" {
  type        = string
  description = "Name of the IAM policy to create."

  validation {
    condition     = can(regex("^[A-Za-z0-9+=,.@_-]{1,128}$", var.name))
    error_message = "The name must be 1 to 128 letters, digits and any of +=,.@_-."
  }
}

variable "path" {
  type        = string
  description = "IAM path of the policy."
  default     = "/"

  validation {
    condition     = can(regex("^(/|/[!-~]{1,510}/)$", var.path))
    error_message = "The path must begin and end with a slash (\"/\" or \"/team/\")."
  }
}

variable "s3_bucket_arn" {
  type        = string
  description = "ARN of the bucket holding S3 leases (arn:aws:s3:::BUCKET; aws-s3-lease's bucket_arn), or null for no S3 leases."
  default     = null

  validation {
    condition     = var.s3_bucket_arn == null || can(regex("^arn:aws[a-zA-Z-]*:s3:::[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$", var.s3_bucket_arn))
    error_message = "The s3_bucket_arn must be a bucket ARN, arn:aws:s3:::BUCKET (no key, no wildcard), or null."
  }

  validation {
    condition     = var.s3_bucket_arn != null || var.dynamodb_table_arn != null || var.dynamodb_shard_table_arn != null
    error_message = "Set s3_bucket_arn, dynamodb_table_arn, dynamodb_shard_table_arn or several: a policy with no lease in it grants nothing."
  }

  validation {
    condition     = var.s3_bucket_arn == null || length(var.s3_lease_names) > 0 || var.s3_whole_prefix || length(var.s3_shard_groups) > 0
    error_message = "With s3_bucket_arn, list the leases in s3_lease_names (preferred: the policy names each object) or the shard groups in s3_shard_groups, or set s3_whole_prefix = true to grant every key under s3_prefix."
  }
}

variable "s3_prefix" {
  type        = string
  description = "Key prefix of the S3 lease objects, without leading or trailing slash (aws-s3-lease's prefix)."
  default     = "leases"

  validation {
    condition     = can(regex("^[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*$", var.s3_prefix))
    error_message = "The s3_prefix must be one or more path segments of letters, digits, '.', '_' and '-', separated by single slashes, with no leading or trailing slash."
  }
}

variable "s3_lease_names" {
  type        = list(string)
  description = "Names of the S3 leases (objects PREFIX/NAME) the policy grants, each by its exact ARN."
  default     = []

  validation {
    condition     = alltrue([for n in var.s3_lease_names : can(regex("^[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*$", n))])
    error_message = "Each S3 lease name must be letters, digits, '.', '_' and '-', slashes allowed between segments: no wildcard."
  }
}

variable "prefer" {
  type        = bool
  description = "The workers run with leasehold run --prefer, or are asked to hand over by leasehold handoff: also grant, beside each lease of s3_lease_names and dynamodb_lease_names, its candidates' key NAME.candidates (and its probe), where they announce themselves. Under s3_whole_prefix, or with no dynamodb_lease_names, they are granted already."
  default     = false
}

variable "s3_shard_groups" {
  type        = list(string)
  description = "Names of the shard groups (leasehold run --shards, package shard) whose workers the policy serves: each group's objects (keys under PREFIX/GROUP/, named by the workers at run time) and the listing of exactly that prefix."
  default     = []

  validation {
    condition     = alltrue([for g in var.s3_shard_groups : can(regex("^[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*$", g))])
    error_message = "Each shard group name must be letters, digits, '.', '_' and '-', slashes allowed between segments: no wildcard."
  }
}

variable "s3_whole_prefix" {
  type        = bool
  description = "Grant every key under s3_prefix (resource arn:aws:s3:::BUCKET/PREFIX/*) instead of the keys in s3_lease_names. Only for workers that choose lease names at run time: any of them can then take any lease under the prefix."
  default     = false
}

variable "s3_kms_key_arn" {
  type        = string
  description = "ARN of the customer-managed KMS key that encrypts the lease objects (aws-s3-lease's kms_key_arn), or null for AES256 or the AWS-managed aws/s3 key. S3 then needs kms:Decrypt (reads) and kms:GenerateDataKey (writes) on it for the caller, granted only through S3 in the key's region, which is the bucket's."
  default     = null

  validation {
    condition     = var.s3_kms_key_arn == null || can(regex("^arn:aws[a-zA-Z-]*:kms:[a-z0-9-]+:[0-9]{12}:key/[A-Za-z0-9-]+$", var.s3_kms_key_arn))
    error_message = "The s3_kms_key_arn must be a KMS key ARN (arn:aws:kms:REGION:ACCOUNT:key/ID), or null."
  }

  validation {
    condition     = var.s3_kms_key_arn == null || var.s3_bucket_arn != null
    error_message = "The s3_kms_key_arn needs s3_bucket_arn."
  }
}

variable "dynamodb_table_arn" {
  type        = string
  description = "ARN of the DynamoDB lease table (aws-dynamodb-lease's table_arn), or null for no DynamoDB leases."
  default     = null

  validation {
    condition     = var.dynamodb_table_arn == null || can(regex("^arn:aws[a-zA-Z-]*:dynamodb:[a-z0-9-]+:[0-9]{12}:table/[A-Za-z0-9_.-]{3,255}$", var.dynamodb_table_arn))
    error_message = "The dynamodb_table_arn must be a table ARN, arn:aws:dynamodb:REGION:ACCOUNT:table/NAME (no index, no wildcard), or null."
  }
}

variable "dynamodb_lease_names" {
  type        = list(string)
  description = "Names of the DynamoDB leases (items) the policy grants, with a dynamodb:LeadingKeys condition; empty grants every item of the table."
  default     = []

  validation {
    condition     = alltrue([for n in var.dynamodb_lease_names : length(n) > 0 && length(n) <= 1024 && !strcontains(n, "*") && !strcontains(n, "?")])
    error_message = "Each DynamoDB lease name must be 1 to 1024 characters with no wildcard ('*' or '?')."
  }
}

variable "dynamodb_shard_table_arn" {
  type        = string
  description = "ARN of the DynamoDB table of shard groups (aws-dynamodb-lease's shard_table_arn), or null for none."
  default     = null

  validation {
    condition     = var.dynamodb_shard_table_arn == null || can(regex("^arn:aws[a-zA-Z-]*:dynamodb:[a-z0-9-]+:[0-9]{12}:table/[A-Za-z0-9_.-]{3,255}$", var.dynamodb_shard_table_arn))
    error_message = "The dynamodb_shard_table_arn must be a table ARN, arn:aws:dynamodb:REGION:ACCOUNT:table/NAME (no index, no wildcard), or null."
  }
}

variable "dynamodb_shard_groups" {
  type        = list(string)
  description = "Names of the shard groups the policy grants in the shard table, with a dynamodb:LeadingKeys condition on each group's partitions (GROUP, GROUP#parts, GROUP.leasehold-probe); empty grants the whole table."
  default     = []

  validation {
    condition     = alltrue([for g in var.dynamodb_shard_groups : length(g) > 0 && length(g) <= 1024 && !strcontains(g, "*") && !strcontains(g, "?") && !strcontains(g, "#")])
    error_message = "Each shard group must be 1 to 1024 characters with no wildcard ('*' or '?') and no '#'."
  }
}

variable "role_name" {
  type        = string
  description = "Name of an IAM role to attach the policy to (the workers' role: an ECS task role, an instance profile's role), or null to attach it yourself."
  default     = null

  validation {
    condition     = var.role_name == null || can(regex("^[A-Za-z0-9+=,.@_-]{1,64}$", var.role_name))
    error_message = "The role_name must be a role's name (1 to 64 letters, digits and +=,.@_-), not its ARN, or null."
  }
}

variable "tags" {
  type        = map(string)
  description = "Tags for the policy."
  default     = {}
}
