variable "project_id" {
  type        = string
  description = "ID of the Google Cloud project for everything."

  validation {
    condition     = can(regex("^[a-z][a-z0-9-]{4,28}[a-z0-9]$", var.project_id))
    error_message = "The project_id must be 6 to 30 lowercase letters, digits and hyphens, beginning with a letter and not ending with a hyphen."
  }
}

variable "region" {
  type        = string
  description = "Region of the service, the job and the bucket, e.g. \"europe-west1\"."

  validation {
    condition     = can(regex("^[a-z]+-[a-z]+[0-9]+$", var.region))
    error_message = "The region must be a Google Cloud region such as \"europe-west1\"."
  }
}

variable "name" {
  type        = string
  description = "Name of the Cloud Run service and of the service account; the job is NAME-job."
  default     = "leasehold-demo"

  validation {
    condition     = can(regex("^[a-z][a-z0-9-]{4,28}[a-z0-9]$", var.name))
    error_message = "The name must be 6 to 30 lowercase letters, digits and hyphens, beginning with a letter and not ending with a hyphen (a service account ID)."
  }
}

variable "bucket_name" {
  type        = string
  description = "Name of the bucket to create for the leases, unique across Cloud Storage."

  validation {
    condition     = can(regex("^[a-z0-9][a-z0-9_-]{1,61}[a-z0-9]$", var.bucket_name))
    error_message = "The bucket_name must be 3 to 63 lowercase letters, digits, '-' and '_', beginning and ending with a letter or digit."
  }
}

variable "image" {
  type        = string
  description = "Container image with leasehold on its PATH, a POSIX shell, and the commands to run."
}

variable "instances" {
  type        = number
  description = "Number of instances of the service, always running: one leads, the others stand by."
  default     = 3

  validation {
    condition     = var.instances >= 1 && var.instances <= 10 && floor(var.instances) == var.instances
    error_message = "The instances must be a whole number from 1 to 10."
  }
}

variable "command" {
  type        = list(string)
  description = "The command the leading instance runs, with its arguments."
  default     = ["./worker"]

  validation {
    condition     = length(var.command) > 0
    error_message = "The command must name a program."
  }
}

variable "lease_name" {
  type        = string
  description = "Name of the lease the service's instances compete for."
  default     = "worker"

  validation {
    condition     = can(regex("^[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*$", var.lease_name))
    error_message = "The lease_name must be letters, digits, '.', '_' and '-', slashes allowed between segments."
  }
}

variable "job_command" {
  type        = list(string)
  description = "The command of the Cloud Run job, run only if its execution wins the job's lease."
  default     = ["./nightly-report"]

  validation {
    condition     = length(var.job_command) > 0
    error_message = "The job_command must name a program."
  }
}

variable "job_lease_name" {
  type        = string
  description = "Name of the lease of the job's executions."
  default     = "nightly"

  validation {
    condition     = can(regex("^[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*$", var.job_lease_name))
    error_message = "The job_lease_name must be letters, digits, '.', '_' and '-', slashes allowed between segments."
  }
}
