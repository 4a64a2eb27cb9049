variable "regions" {
  type        = list(string)
  description = "The three members' AWS regions, in the quorum's order: a bucket (or table) in each. The workers may run in any of them, or elsewhere; each renewal waits for the second-fastest member to answer, so keep at least two of them near the workers."

  validation {
    condition     = length(var.regions) == 3 && length(distinct(var.regions)) == 3
    error_message = "The regions must be three different regions: a quorum has an odd number of members, at least 3, each a store of its own."
  }

  validation {
    condition     = alltrue([for r in var.regions : can(regex("^[a-z]{2}(-[a-z]+)+-[0-9]$", r))])
    error_message = "Each of the regions must be an AWS region name such as \"eu-west-1\"."
  }
}

variable "name" {
  type        = string
  description = "Prefix of the role, the policies and (DynamoDB) the tables, NAME-leases."
  default     = "leasehold-quorum"

  validation {
    condition     = can(regex("^[a-z][a-z0-9-]{0,30}$", var.name))
    error_message = "The name must be 1 to 31 lowercase letters, digits and hyphens, beginning with a letter."
  }
}

variable "backend" {
  type        = string
  description = "What each member is: \"s3\" (a bucket BUCKET_PREFIX-REGION in each region) or \"dynamodb\" (a table NAME-leases in each region)."
  default     = "s3"

  validation {
    condition     = contains(["s3", "dynamodb"], var.backend)
    error_message = "The backend must be \"s3\" or \"dynamodb\"."
  }
}

variable "bucket_prefix" {
  type        = string
  description = "With backend = \"s3\": the buckets are named BUCKET_PREFIX-REGION, one per region (bucket names are global: choose a prefix of your own)."
  default     = null

  validation {
    condition     = var.backend != "s3" || var.bucket_prefix != null
    error_message = "The bucket_prefix is required with backend = \"s3\"."
  }

  validation {
    # Terraform's || evaluates both sides, and a null cannot be in a
    # template: the conditional evaluates only the chosen side.
    condition     = var.bucket_prefix == null ? true : can(regex("^[a-z0-9][a-z0-9-]*$", var.bucket_prefix)) && alltrue([for r in var.regions : length("${var.bucket_prefix}-${r}") <= 63])
    error_message = "The bucket_prefix must be lowercase letters, digits and hyphens, beginning with a letter or digit (no dots: they break TLS to the bucket's virtual host), and short enough that BUCKET_PREFIX-REGION fits S3's 63 characters."
  }
}

variable "lease_name" {
  type        = string
  description = "Name of the lease the workers compete for: the object leases/NAME in each bucket, or the item NAME in each table."
  default     = "worker"

  validation {
    condition     = can(regex("^[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*$", var.lease_name))
    error_message = "The lease_name must be letters, digits, '.', '_' and '-', slashes allowed between segments."
  }
}

variable "role_name" {
  type        = string
  description = "Name of the workers' existing IAM role (an ECS task role, an instance profile's role) to attach the three policies to; null creates a role NAME-task for ECS tasks of this account."
  default     = null

  validation {
    condition     = var.role_name == null || can(regex("^[A-Za-z0-9+=,.@_-]{1,64}$", var.role_name))
    error_message = "The role_name must be a role's name (1 to 64 letters, digits and +=,.@_-), not its ARN, or null."
  }
}

variable "force_destroy" {
  type        = bool
  description = "Let terraform destroy delete the buckets with the lease objects in them, or the tables (deletion protection off). The records carry the quorum's fencing token: keep false unless the lease is disposable."
  default     = false
}

variable "tags" {
  type        = map(string)
  description = "Tags for every resource."
  default     = {}
}
