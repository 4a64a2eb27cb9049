variable "resource_group_name" {
  type        = string
  description = "Name of the existing resource group for the storage account."

  validation {
    condition     = can(regex("^[-\\w._()]{0,89}[-\\w_()]$", var.resource_group_name))
    error_message = "The resource_group_name must be 1 to 90 letters, digits, '-', '_', '.', '(' and ')', not ending in '.'."
  }
}

variable "location" {
  type        = string
  description = "Azure region of the storage account, e.g. \"westeurope\"."

  validation {
    condition     = length(trimspace(var.location)) > 0
    error_message = "The location must name an Azure region."
  }
}

variable "storage_account_name" {
  type        = string
  description = "Name of the storage account to create: 3 to 24 lowercase letters and digits, unique across Azure."

  validation {
    condition     = can(regex("^[a-z0-9]{3,24}$", var.storage_account_name))
    error_message = "The storage_account_name must be 3 to 24 lowercase letters and digits."
  }
}

variable "container_name" {
  type        = string
  description = "Name of the private container for the lease blobs. The role assignment is scoped to it."
  default     = "leases"

  validation {
    condition     = can(regex("^[a-z0-9]([a-z0-9-]{1,61}[a-z0-9])$", var.container_name)) && !strcontains(var.container_name, "--")
    error_message = "The container_name must be 3 to 63 lowercase letters, digits and single hyphens, beginning and ending with a letter or digit."
  }
}

variable "principal_id" {
  type        = string
  description = "Object (principal) ID of the identity the workers run as, usually a user-assigned managed identity's principal_id. It gets the module's custom role (azurelease.DataActions) on the container only."

  validation {
    condition     = can(regex("^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$", var.principal_id))
    error_message = "The principal_id must be a GUID: the identity's object (principal) ID, not its client ID or resource ID."
  }
}

variable "principal_type" {
  type        = string
  description = "Type of principal_id: \"ServicePrincipal\" for managed identities (this also skips the Entra ID replication check for a newly created identity), \"User\" or \"Group\"."
  default     = "ServicePrincipal"

  validation {
    condition     = contains(["ServicePrincipal", "User", "Group"], var.principal_type)
    error_message = "The principal_type must be \"ServicePrincipal\", \"User\" or \"Group\"."
  }
}

variable "lease_names" {
  type        = list(string)
  description = "Names of the lease blobs whose URLs to output. The blobs themselves are created by leasehold on first use, never by Terraform."
  default     = []

  validation {
    condition     = alltrue([for n in var.lease_names : can(regex("^[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*$", n)) && length(n) <= 1024])
    error_message = "Each lease name must be letters, digits, '.', '_' and '-' (slashes allowed between segments, not at either end), at most 1024 characters."
  }

  validation {
    condition     = length(distinct(var.lease_names)) == length(var.lease_names)
    error_message = "The lease_names must not repeat a name."
  }
}

variable "account_replication_type" {
  type        = string
  description = "Replication of the storage account: LRS, ZRS, GRS, RAGRS, GZRS or RAGZRS. Leases are tiny; zone redundancy (ZRS) keeps them available through a zone outage where the region has zones."
  default     = "LRS"

  validation {
    condition     = contains(["LRS", "ZRS", "GRS", "RAGRS", "GZRS", "RAGZRS"], var.account_replication_type)
    error_message = "The account_replication_type must be one of LRS, ZRS, GRS, RAGRS, GZRS, RAGZRS."
  }
}

variable "shared_access_key_enabled" {
  type        = bool
  description = "Allow Shared Key (account key and SAS) authorization. Off by default: workers use Entra ID (a managed identity) and the role assignment. With it off, the azurerm provider must use Entra ID for storage (storage_use_azuread = true in its provider block)."
  default     = false
}

variable "public_network_access_enabled" {
  type        = bool
  description = "Allow access from public networks (still authenticated). Turn off only when the workers reach the account through a private endpoint or a service endpoint."
  default     = true
}

variable "tags" {
  type        = map(string)
  description = "Tags for the storage account."
  default     = {}
}
