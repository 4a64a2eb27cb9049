variable "region" {
  type        = string
  description = "AWS region for everything: the lease bucket or table, the cluster and the logs."

  validation {
    condition     = can(regex("^[a-z]{2}(-[a-z]+)+-[0-9]$", var.region))
    error_message = "The region must be an AWS region name such as \"eu-west-1\"."
  }
}

variable "name" {
  type        = string
  description = "Name of the service; also the prefix of the cluster, roles, policy, log group and (DynamoDB) table."
  default     = "leasehold-demo"

  validation {
    condition     = can(regex("^[a-z][a-z0-9-]{0,30}$", var.name))
    error_message = "The name must be 1 to 31 lowercase letters, digits and hyphens, beginning with a letter."
  }
}

variable "backend" {
  type        = string
  description = "Where the lease lives: \"s3\" (an object in a new bucket named bucket_name) or \"dynamodb\" (an item in a new table NAME-leases)."
  default     = "s3"

  validation {
    condition     = contains(["s3", "dynamodb"], var.backend)
    error_message = "The backend must be \"s3\" or \"dynamodb\"."
  }
}

variable "bucket_name" {
  type        = string
  description = "With backend = \"s3\": name of the bucket to create for the lease (globally unique)."
  default     = null

  validation {
    condition     = var.backend != "s3" || var.bucket_name != null
    error_message = "The bucket_name is required with backend = \"s3\"."
  }
}

variable "lease_name" {
  type        = string
  description = "Name of the lease the tasks compete for."
  default     = "worker"

  validation {
    condition     = can(regex("^[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*$", var.lease_name))
    error_message = "The lease_name must be letters, digits, '.', '_' and '-', slashes allowed between segments."
  }
}

variable "image" {
  type        = string
  description = "Your worker's image, by reference (REGISTRY/worker:1), with leasehold at /leasehold: built FROM the leasehold image, or with COPY --from=REGISTRY/leasehold:VERSION /leasehold /leasehold. Its entry point is replaced by `/leasehold run --`."
}

variable "command" {
  type        = list(string)
  description = "Your worker's command and arguments: run by `leasehold run` in whichever task holds the lease, and stopped when it loses the lease."

  validation {
    condition     = length(var.command) > 0
    error_message = "The command must name a program to run."
  }
}

variable "extra_environment" {
  type        = map(string)
  description = "More environment variables for the container, e.g. other LEASEHOLD_ settings of `leasehold run`. LEASEHOLD_LEASE and AWS_REGION are set by the example."
  default     = {}

  validation {
    condition     = !contains(keys(var.extra_environment), "LEASEHOLD_LEASE") && !contains(keys(var.extra_environment), "AWS_REGION")
    error_message = "LEASEHOLD_LEASE and AWS_REGION are set by the example: leave them out of extra_environment."
  }
}

variable "desired_count" {
  type        = number
  description = "Number of tasks: one leads, the others wait to take over; with shards, they share the shards (and max_count, if set, lets autoscaling add more)."
  default     = 3

  validation {
    condition     = var.desired_count >= 1 && floor(var.desired_count) == var.desired_count
    error_message = "The desired_count must be a whole number, at least 1."
  }
}

variable "shards" {
  type        = number
  description = "If above 0, a service of shard workers: each task runs `leasehold run --shards N -- COMMAND`, once per shard it owns, the group named lease_name (on DynamoDB, in a table NAME-shards). 0: one lease, one leader."
  default     = 0

  validation {
    condition     = var.shards >= 0 && var.shards <= 100000 && floor(var.shards) == var.shards
    error_message = "The shards must be a whole number from 0 to 100000 (shard.MaxShards)."
  }

  validation {
    condition     = var.shards == 0 || var.schedule_expression == null
    error_message = "Set shards or schedule_expression, not both: a scheduled task runs once, not per shard."
  }
}

variable "max_count" {
  type        = number
  description = "With shards: the most tasks Application Auto Scaling may run, by CPU (from desired_count up); null: no autoscaling, desired_count tasks. More tasks than shards would own nothing."
  default     = null

  validation {
    condition     = var.max_count == null || (var.shards > 0 && var.max_count >= var.desired_count && var.max_count <= var.shards)
    error_message = "The max_count needs shards, and must be from desired_count to shards."
  }
}

variable "target_cpu_utilization" {
  type        = number
  description = "With max_count: the service's average CPU utilization, percent, that autoscaling keeps."
  default     = 70

  validation {
    condition     = var.target_cpu_utilization > 0 && var.target_cpu_utilization <= 100
    error_message = "The target_cpu_utilization must be above 0 and at most 100."
  }
}

variable "cpu" {
  type        = number
  description = "Fargate task CPU units (256 = 0.25 vCPU)."
  default     = 256

  validation {
    condition     = contains([256, 512, 1024, 2048, 4096, 8192, 16384], var.cpu)
    error_message = "The cpu must be a Fargate size: 256, 512, 1024, 2048, 4096, 8192 or 16384."
  }
}

variable "memory" {
  type        = number
  description = "Fargate task memory, MiB; must suit cpu (512 to 2048 for 256 CPU units)."
  default     = 512

  validation {
    condition     = var.memory >= 512 && var.memory <= 122880
    error_message = "The memory must be between 512 and 122880 MiB."
  }
}

variable "stop_timeout" {
  type        = number
  description = "Seconds ECS waits after SIGTERM before SIGKILL: time for the leader to stop your command and release the lease; with shards, for every shard's command to stop (--grace, 10 s by default) and the shards to be released."
  default     = 30

  validation {
    condition     = var.stop_timeout >= 2 && var.stop_timeout <= 120
    error_message = "The stop_timeout must be between 2 and 120 seconds (Fargate's maximum)."
  }
}

variable "subnet_ids" {
  type        = list(string)
  description = "Subnets for the tasks. They need a route to S3 or DynamoDB, ECR (or your registry) and CloudWatch Logs: a NAT gateway, VPC endpoints, or public subnets with assign_public_ip."

  validation {
    condition     = length(var.subnet_ids) > 0 && alltrue([for s in var.subnet_ids : can(regex("^subnet-[0-9a-f]+$", s))])
    error_message = "The subnet_ids must be one or more subnet IDs (subnet-...)."
  }
}

variable "security_group_ids" {
  type        = list(string)
  description = "Security groups for the tasks. The workers take no inbound traffic: outbound HTTPS (443) is all they need."

  validation {
    condition     = length(var.security_group_ids) > 0 && alltrue([for s in var.security_group_ids : can(regex("^sg-[0-9a-f]+$", s))])
    error_message = "The security_group_ids must be one or more security group IDs (sg-...)."
  }
}

variable "assign_public_ip" {
  type        = bool
  description = "Give each task a public IP (for public subnets without a NAT gateway)."
  default     = false
}

variable "log_retention_days" {
  type        = number
  description = "Days to keep the tasks' logs."
  default     = 7

  validation {
    condition     = contains([1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653], var.log_retention_days)
    error_message = "The log_retention_days must be a CloudWatch Logs retention: 1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288 or 3653."
  }
}

variable "schedule_expression" {
  type        = string
  description = "If set (rate(1 hour), cron(0 3 * * ? *)), no service: an EventBridge rule starts one task per tick, which runs the command with `leasehold run --once --period TIME`, once per tick."
  default     = null

  validation {
    condition     = var.schedule_expression == null || can(regex("^(rate|cron)\\(.+\\)$", var.schedule_expression))
    error_message = "The schedule_expression must be rate(...) or cron(...)."
  }
}

variable "tags" {
  type        = map(string)
  description = "Tags for every resource."
  default     = {}
}
