variable "region" {
  type        = string
  description = "AWS region for everything: the table, the function, the schedule and the logs."

  validation {
    condition     = can(regex("^[a-z]{2}(-[a-z]+)+-[0-9]$", var.region))
    error_message = "The region must be an AWS region name such as \"eu-west-1\"."
  }
}

variable "name" {
  type        = string
  description = "Name of the function, the rule and the lease; also the prefix of the role, the policy and the table (NAME-leases)."
  default     = "leasehold-scheduled"

  validation {
    condition     = can(regex("^[a-z][a-z0-9-]{0,30}$", var.name))
    error_message = "The name must be 1 to 31 lowercase letters, digits and hyphens, beginning with a letter."
  }
}

variable "package_path" {
  type        = string
  description = "Path of the function's zip: function/ built as `bootstrap` for linux/arm64 and zipped (see README.md)."
}

variable "schedule_expression" {
  type        = string
  description = "The EventBridge schedule: rate(1 hour), cron(0 * * * ? *), ..."
  default     = "rate(1 hour)"

  validation {
    condition     = can(regex("^(rate|cron)\\(.+\\)$", var.schedule_expression))
    error_message = "The schedule_expression must be rate(...) or cron(...)."
  }
}

variable "lease_ttl_seconds" {
  type        = number
  description = "The lease's TTL, in seconds: how long after a crashed invocation's last renewal another may take the tick over."
  default     = 15

  validation {
    condition     = var.lease_ttl_seconds >= 1 && floor(var.lease_ttl_seconds) == var.lease_ttl_seconds
    error_message = "The lease_ttl_seconds must be a whole number of seconds, at least 1."
  }
}

variable "timeout" {
  type        = number
  description = "The function's timeout, in seconds: the job's longest run, plus a TTL and a few seconds to campaign."
  default     = 300

  validation {
    condition     = var.timeout >= 30 && var.timeout <= 900
    error_message = "The timeout must be from 30 to 900 seconds."
  }
}

variable "retry_attempts" {
  type        = number
  description = "How many times Lambda retries a failed invocation (0 to 2): each retry of a failed tick runs the job again."
  default     = 2

  validation {
    condition     = var.retry_attempts >= 0 && var.retry_attempts <= 2
    error_message = "The retry_attempts must be 0, 1 or 2."
  }
}

variable "max_event_age_seconds" {
  type        = number
  description = "How long Lambda keeps retrying a tick's event, in seconds (60 to 21600)."
  default     = 3600

  validation {
    condition     = var.max_event_age_seconds >= 60 && var.max_event_age_seconds <= 21600
    error_message = "The max_event_age_seconds must be from 60 to 21600."
  }
}

variable "log_retention_days" {
  type        = number
  description = "Days to keep the function's logs."
  default     = 30

  validation {
    condition     = contains([1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653], var.log_retention_days)
    error_message = "The log_retention_days must be a CloudWatch Logs retention: 1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288 or 3653."
  }
}

variable "tags" {
  type        = map(string)
  description = "Tags for every resource."
  default     = {}
}
