variable "project_id" {
  type        = string
  description = "ID of the Google Cloud project for the bucket and the custom role."

  validation {
    condition     = can(regex("^[a-z][a-z0-9-]{4,28}[a-z0-9]$", var.project_id))
    error_message = "The project_id must be 6 to 30 lowercase letters, digits and hyphens, beginning with a letter and not ending with a hyphen."
  }
}

variable "bucket_name" {
  type        = string
  description = "Name of the bucket that holds the lease objects: the bucket to create, or an existing bucket when create_bucket is false."

  validation {
    condition     = can(regex("^[a-z0-9][a-z0-9_-]{1,61}[a-z0-9]$", var.bucket_name)) && !startswith(var.bucket_name, "goog")
    error_message = "The bucket_name must be 3 to 63 lowercase letters, digits, '-' and '_', begin and end with a letter or digit, and not begin with \"goog\"."
  }
}

variable "create_bucket" {
  type        = bool
  description = "Create the bucket (true) or use an existing bucket named bucket_name (false). An existing bucket keeps its own settings: it needs uniform bucket-level access (for the IAM condition), and soft delete off and versioning off to keep renewals from being billed as stored generations."
  default     = true
}

variable "location" {
  type        = string
  description = "Location of the bucket to create: a region such as \"europe-west1\" (Class A operations cost half of a multi-region's), or a multi-region or dual-region. Used only when create_bucket is true."
  default     = "US-CENTRAL1"

  validation {
    condition     = length(trimspace(var.location)) > 0
    error_message = "The location must name a Cloud Storage location."
  }
}

variable "prefix" {
  type        = string
  description = "Prefix of the lease objects' names, without leading or trailing slash: lease NAME is the object PREFIX/NAME. The IAM condition limits the grant to it."
  default     = "leases"

  validation {
    condition     = can(regex("^[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*$", var.prefix)) && length(var.prefix) <= 512
    error_message = "The prefix must be one or more path segments of letters, digits, '.', '_' and '-', separated by single slashes, with no leading or trailing slash (at most 512 characters)."
  }
}

variable "lease_names" {
  type        = list(string)
  description = "Names of the leases (each the object PREFIX/NAME) that the grant names one by one, with their probe objects (PREFIX/NAME.leasehold-probe), and whose URLs to output. The objects themselves are created by leasehold on first acquisition, never by Terraform."
  default     = []

  validation {
    condition     = length(var.lease_names) > 0 || var.whole_prefix || length(var.shard_groups) > 0
    error_message = "List the leases in lease_names (preferred: the grant names each object) or the shard groups in shard_groups, or set whole_prefix = true to grant every object under prefix."
  }

  validation {
    condition     = alltrue([for n in var.lease_names : can(regex("^[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*$", n)) && length(n) <= 256])
    error_message = "Each lease name must be letters, digits, '.', '_' and '-' (slashes allowed between segments, not at either end), at most 256 characters."
  }

  validation {
    condition     = length(distinct(var.lease_names)) == length(var.lease_names)
    error_message = "The lease_names must not repeat a name."
  }
}

variable "whole_prefix" {
  type        = bool
  description = "Grant every object under prefix (an IAM condition resource.name.startsWith) instead of the objects of lease_names. Only for workers that choose lease names at run time: any of them can then take, or delete, any lease under the prefix."
  default     = false
}

variable "prefer" {
  type        = bool
  description = "The workers run with leasehold run --prefer, or are asked to hand over by leasehold handoff: also grant, beside each lease of lease_names, its candidates' object NAME.candidates (and its probe), where they announce themselves. Under whole_prefix they are granted already."
  default     = false
}

variable "shard_groups" {
  type        = list(string)
  description = "Names of the shard groups (leasehold run --shards, package shard; gs://BUCKET/PREFIX/GROUP) whose workers the grant serves: every object under PREFIX/GROUP/ (the workers name theirs at run time), and, through a second custom role (ROLE_IDGroupList, storage.objects.list), listings of exactly that prefix."
  default     = []

  validation {
    condition     = alltrue([for g in var.shard_groups : can(regex("^[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*$", g)) && length(g) <= 256])
    error_message = "Each shard group name must be letters, digits, '.', '_' and '-' (slashes allowed between segments, not at either end), at most 256 characters."
  }
}

variable "service_account_email" {
  type        = string
  description = "Email of the service account the workers run as (Cloud Run, GKE workload identity, Compute Engine). It gets the custom role on the lease objects only."

  validation {
    condition     = can(regex("^[^@\\s]+@[^@\\s]+\\.gserviceaccount\\.com$", var.service_account_email))
    error_message = "The service_account_email must be a service account's email, NAME@PROJECT.iam.gserviceaccount.com."
  }
}

variable "role_id" {
  type        = string
  description = "ID of the custom role to create in the project, holding exactly gcslease.IAMPermissions."
  default     = "leaseholdLease"

  validation {
    condition     = can(regex("^[a-zA-Z0-9_.]{3,55}$", var.role_id))
    error_message = "The role_id must be 3 to 55 letters, digits, '_' and '.' (the listing role of shard groups adds GroupList, up to IAM's 64)."
  }
}

variable "labels" {
  type        = map(string)
  description = "Labels for the bucket to create."
  default     = {}
}
