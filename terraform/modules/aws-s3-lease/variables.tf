variable "bucket_name" {
  type        = string
  description = "Name of the S3 bucket that holds the lease objects: the bucket to create, or an existing bucket when create_bucket is false."

  validation {
    condition     = can(regex("^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$", var.bucket_name)) && !strcontains(var.bucket_name, "..")
    error_message = "The bucket_name must be 3 to 63 characters of lowercase letters, digits, dots and hyphens, begin and end with a letter or digit, and not contain \"..\"."
  }
}

variable "create_bucket" {
  type        = bool
  description = "Create the bucket (true) or use an existing bucket named bucket_name (false). With false the module creates nothing: it looks the bucket up and computes the lease URLs and ARNs; the bucket's owner keeps its encryption, public access block and TLS-only policy."
  default     = true
}

variable "prefix" {
  type        = string
  description = "Key prefix under which the lease objects live, without leading or trailing slash: lease NAME is the object PREFIX/NAME. IAM grants (module aws-lease-iam) are scoped to it."
  default     = "leases"

  validation {
    condition     = can(regex("^[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*$", var.prefix)) && length(var.prefix) <= 512
    error_message = "The prefix must be one or more path segments of letters, digits, '.', '_' and '-', separated by single slashes, with no leading or trailing slash (at most 512 characters)."
  }
}

variable "lease_names" {
  type        = list(string)
  description = "Names of the leases whose URLs and object ARNs to output (each becomes the object PREFIX/NAME). The objects themselves are created by leasehold on first acquisition, never by Terraform."
  default     = []

  validation {
    condition     = alltrue([for n in var.lease_names : can(regex("^[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*$", n)) && length(n) <= 256])
    error_message = "Each lease name must be letters, digits, '.', '_' and '-' (slashes allowed between segments, not at either end), at most 256 characters."
  }

  validation {
    condition     = length(distinct(var.lease_names)) == length(var.lease_names)
    error_message = "The lease_names must not repeat a name."
  }
}

variable "sse_algorithm" {
  type        = string
  description = "Default server-side encryption of the bucket: \"AES256\" (S3-managed keys) or \"aws:kms\" (KMS; the key in kms_key_arn, else the AWS-managed aws/s3 key). Only used when create_bucket is true."
  default     = "AES256"

  validation {
    condition     = contains(["AES256", "aws:kms"], var.sse_algorithm)
    error_message = "The sse_algorithm must be \"AES256\" or \"aws:kms\"."
  }
}

variable "kms_key_arn" {
  type        = string
  description = "ARN of a customer-managed KMS key for sse_algorithm = \"aws:kms\"; null uses the AWS-managed aws/s3 key. Give the same ARN to aws-lease-iam (s3_kms_key_arn) so the workers may use it."
  default     = null

  validation {
    condition     = var.kms_key_arn == null || can(regex("^arn:aws[a-zA-Z-]*:kms:[a-z0-9-]+:[0-9]{12}:key/[A-Za-z0-9-]+$", var.kms_key_arn))
    error_message = "The kms_key_arn must be a KMS key ARN (arn:aws:kms:REGION:ACCOUNT:key/ID), or null."
  }

  validation {
    condition     = var.kms_key_arn == null || var.sse_algorithm == "aws:kms"
    error_message = "The kms_key_arn is only used with sse_algorithm = \"aws:kms\"."
  }
}

variable "versioning_enabled" {
  type        = bool
  description = "Turn on bucket versioning. Leases do not need it, and every renewal then leaves a noncurrent version behind (640 an hour per lease at the defaults), so a lifecycle rule expiring noncurrent versions under the prefix is added with it."
  default     = false
}

variable "noncurrent_version_expiration_days" {
  type        = number
  description = "With versioning_enabled: days after which noncurrent versions of the lease objects expire."
  default     = 1

  validation {
    condition     = var.noncurrent_version_expiration_days >= 1 && floor(var.noncurrent_version_expiration_days) == var.noncurrent_version_expiration_days
    error_message = "The noncurrent_version_expiration_days must be a whole number of days, at least 1."
  }
}

variable "force_destroy" {
  type        = bool
  description = "Let terraform destroy delete the bucket with the lease objects in it. The objects carry the fencing counters: keep false unless the leases are disposable."
  default     = false
}

variable "tags" {
  type        = map(string)
  description = "Tags for the bucket."
  default     = {}
}
