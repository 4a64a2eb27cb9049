variable "table_name" {
  type        = string
  description = "Name of the DynamoDB table to create for the lease items."

  validation {
    condition     = can(regex("^[a-zA-Z0-9_.-]{3,255}$", var.table_name))
    error_message = "The table_name must be 3 to 255 letters, digits, '_', '-' or '.'."
  }
}

variable "key_attribute" {
  type        = string
  description = "Name of the table's partition (HASH) key, of type S, whose value is the lease name. Keep the default, dynamolease.DefaultKeyAttribute (\"lease\"): any other name must be given to every worker too, as ?key_attribute=NAME in the lease URL (lease_urls does that)."
  default     = "lease"

  validation {
    condition     = length(var.key_attribute) >= 1 && length(var.key_attribute) <= 255
    error_message = "The key_attribute must be 1 to 255 characters."
  }

  validation {
    # The attributes of a lease item besides its key (lease/dynamolease/item.go).
    condition     = !contains(["leasehold", "holder", "token", "ttl_ms", "released", "nonce"], var.key_attribute)
    error_message = "The key_attribute must not be an attribute of the lease item: leasehold, holder, token, ttl_ms, released, nonce."
  }
}

variable "lease_names" {
  type        = list(string)
  description = "Names of the leases whose URLs to output (each is an item whose key is the name). The items themselves are created by leasehold on first acquisition, never by Terraform."
  default     = []

  validation {
    condition     = alltrue([for n in var.lease_names : length(n) >= 1 && length(n) <= 2048 && can(regex("^[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*$", n))])
    error_message = "Each lease name must be 1 to 2048 letters, digits, '.', '_' and '-' (slashes allowed between segments, not at either end)."
  }

  validation {
    condition     = length(distinct(var.lease_names)) == length(var.lease_names)
    error_message = "The lease_names must not repeat a name."
  }
}

variable "shard_table_name" {
  type        = string
  description = "Name of a second table to create for shard groups (package shard, dynamolease.Objects): partition key \"group\" and sort key \"key\", both S (dynamolease.DefaultGroupAttribute and DefaultObjectKeyAttribute). Null (the default) creates none."
  default     = null

  validation {
    condition     = var.shard_table_name == null || can(regex("^[a-zA-Z0-9_.-]{3,255}$", var.shard_table_name))
    error_message = "The shard_table_name must be 3 to 255 letters, digits, '_', '-' or '.', or null."
  }

  validation {
    condition     = var.shard_table_name != var.table_name
    error_message = "The shard_table_name must differ from table_name: a shard group's table has a sort key, a lease table none."
  }
}

variable "deletion_protection_enabled" {
  type        = bool
  description = "Refuse to delete the table (terraform destroy fails until this is turned off). On by default: the items carry the leases' fencing counters."
  default     = true
}

variable "point_in_time_recovery_enabled" {
  type        = bool
  description = "Turn on point-in-time recovery (continuous backups) for the table."
  default     = false
}

variable "kms_key_arn" {
  type        = string
  description = "ARN of a customer-managed KMS key to encrypt the table with; null keeps DynamoDB's default encryption with an AWS-owned key. DynamoDB uses the key through grants: the workers' policy needs no KMS permission."
  default     = null

  validation {
    condition     = var.kms_key_arn == null || can(regex("^arn:aws[a-zA-Z-]*:kms:[a-z0-9-]+:[0-9]{12}:key/[A-Za-z0-9-]+$", var.kms_key_arn))
    error_message = "The kms_key_arn must be a KMS key ARN (arn:aws:kms:REGION:ACCOUNT:key/ID), or null."
  }
}

variable "tags" {
  type        = map(string)
  description = "Tags for the table."
  default     = {}
}
