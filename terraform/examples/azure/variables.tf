variable "location" {
  type        = string
  description = "Azure region for everything, e.g. \"westeurope\"."

  validation {
    condition     = length(trimspace(var.location)) > 0
    error_message = "The location must name an Azure region."
  }
}

variable "name" {
  type        = string
  description = "Name of the container app; also the prefix of the resource group, identity, environment and workspace."
  default     = "leasehold-demo"

  validation {
    condition     = can(regex("^[a-z][a-z0-9-]{0,30}[a-z0-9]$", var.name)) && !strcontains(var.name, "--")
    error_message = "The name must be 2 to 32 lowercase letters, digits and single hyphens, beginning with a letter and not ending with a hyphen."
  }
}

variable "storage_account_name" {
  type        = string
  description = "Name of the storage account to create for the lease: 3 to 24 lowercase letters and digits, unique across Azure."

  validation {
    condition     = can(regex("^[a-z0-9]{3,24}$", var.storage_account_name))
    error_message = "The storage_account_name must be 3 to 24 lowercase letters and digits."
  }
}

variable "lease_name" {
  type        = string
  description = "Name of the lease (blob) the replicas compete for."
  default     = "worker"

  validation {
    condition     = can(regex("^[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*$", var.lease_name))
    error_message = "The lease_name must be letters, digits, '.', '_' and '-', slashes allowed between segments."
  }
}

variable "image" {
  type        = string
  description = "Your worker's image, by reference (REGISTRY/worker:1), with leasehold at /leasehold: built FROM the leasehold image, or with COPY --from=REGISTRY/leasehold:VERSION /leasehold /leasehold. Its command is replaced by `/leasehold run --`."
}

variable "command" {
  type        = list(string)
  description = "Your worker's command and arguments: run by `leasehold run` in whichever replica holds the lease, and stopped when it loses the lease."

  validation {
    condition     = length(var.command) > 0
    error_message = "The command must name a program to run."
  }
}

variable "extra_environment" {
  type        = map(string)
  description = "More environment variables for the container, e.g. other LEASEHOLD_ settings of `leasehold run`. LEASEHOLD_LEASE and AZURE_CLIENT_ID are set by the example."
  default     = {}

  validation {
    condition     = !contains(keys(var.extra_environment), "LEASEHOLD_LEASE") && !contains(keys(var.extra_environment), "AZURE_CLIENT_ID")
    error_message = "LEASEHOLD_LEASE and AZURE_CLIENT_ID are set by the example: leave them out of extra_environment."
  }
}

variable "replicas" {
  type        = number
  description = "Number of replicas: one leads, the others wait to take over."
  default     = 3

  validation {
    condition     = var.replicas >= 1 && var.replicas <= 300 && floor(var.replicas) == var.replicas
    error_message = "The replicas must be a whole number from 1 to 300."
  }
}

variable "cpu" {
  type        = number
  description = "vCPUs per replica (Consumption profile: 0.25 to 4 in steps of 0.25, with memory twice as many GiB)."
  default     = 0.25

  validation {
    condition     = var.cpu >= 0.25 && var.cpu <= 4 && floor(var.cpu * 4) == var.cpu * 4
    error_message = "The cpu must be 0.25 to 4 in steps of 0.25."
  }
}

variable "termination_grace_period_seconds" {
  type        = number
  description = "Seconds a replica gets after SIGTERM before it is killed: time for the leader to stop your command and release the lease."
  default     = 30

  validation {
    condition     = var.termination_grace_period_seconds >= 2 && var.termination_grace_period_seconds <= 600
    error_message = "The termination_grace_period_seconds must be between 2 and 600."
  }
}

variable "registry_server" {
  type        = string
  description = "Login server of a private registry holding the image (e.g. myregistry.azurecr.io), pulled with the workers' identity, or null for a public image. Grant that identity AcrPull on the registry yourself: this example grants it nothing but the lease."
  default     = null

  validation {
    condition     = var.registry_server == null || can(regex("^[a-z0-9.-]+(:[0-9]+)?$", var.registry_server))
    error_message = "The registry_server must be a host name (myregistry.azurecr.io), without scheme or path, or null."
  }
}

variable "tags" {
  type        = map(string)
  description = "Tags for every resource."
  default     = {}
}
