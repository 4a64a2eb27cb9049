# A storage account and a private container for leasehold's lease blobs
# (package lease/azurelease), and a custom role with exactly the data
# actions the workers' identity needs, assigned on that container only. Terraform never creates or deletes the blobs:
# leasehold creates each on first use and keeps its fencing counter in the
# blob's metadata, so the blobs must not be deleted.

resource "azurerm_storage_account" "this" {
  name                     = var.storage_account_name
  resource_group_name      = var.resource_group_name
  location                 = var.location
  account_kind             = "StorageV2"
  account_tier             = "Standard"
  account_replication_type = var.account_replication_type
  access_tier              = "Hot"

  min_tls_version                  = "TLS1_2"
  https_traffic_only_enabled       = true
  allow_nested_items_to_be_public  = false
  shared_access_key_enabled        = var.shared_access_key_enabled
  default_to_oauth_authentication  = true
  public_network_access_enabled    = var.public_network_access_enabled
  cross_tenant_replication_enabled = false

  tags = var.tags
}

resource "azurerm_storage_container" "leases" {
  name                  = var.container_name
  storage_account_id    = azurerm_storage_account.this.id
  container_access_type = "private"
}

locals {
  # azurelease.DataActions: read (Get Blob Properties) and write (Put Blob,
  # Set Blob Metadata, Lease Blob), nothing else: no blob delete, which
  # would let a worker delete the lease blob and restart its fencing
  # tokens, and no container action.
  lease_data_actions = [
    "Microsoft.Storage/storageAccounts/blobServices/containers/blobs/read",
    "Microsoft.Storage/storageAccounts/blobServices/containers/blobs/write",
  ]
}

data "azurerm_resource_group" "this" {
  name = var.resource_group_name
}

# A custom role with exactly the data actions leasehold's calls need. Role
# definitions live in a subscription or resource group (not on a
# container); the assignment below scopes it to the container.
resource "azurerm_role_definition" "lease" {
  name        = "leasehold lease blobs (${var.storage_account_name})"
  scope       = data.azurerm_resource_group.this.id
  description = "leasehold: read, write and lease the blobs of its lease container; no delete."

  permissions {
    actions          = []
    not_actions      = []
    data_actions     = local.lease_data_actions
    not_data_actions = []
  }

  assignable_scopes = [data.azurerm_resource_group.this.id]
}

# The custom role, scoped to the container: the identity can read, write
# and lease blobs in it, and nothing else in the account.
resource "azurerm_role_assignment" "lease" {
  scope              = azurerm_storage_container.leases.id
  role_definition_id = azurerm_role_definition.lease.role_definition_resource_id
  principal_id       = var.principal_id
  principal_type     = var.principal_type
  description        = "leasehold: lease blobs in container ${var.container_name}"
}
