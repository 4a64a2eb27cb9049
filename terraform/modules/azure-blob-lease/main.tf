# A storage account and a private container for leasehold's lease blobs
# (package lease/azurelease), and the one role the workers' identity needs,
# on that container only. Terraform never creates or deletes the blobs:
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

# azurelease.RoleDefinitionName, scoped to the container: the identity can
# read, write and lease blobs in it and nowhere else in the account.
resource "azurerm_role_assignment" "lease_contributor" {
  scope                = azurerm_storage_container.leases.id
  role_definition_name = "Storage Blob Data Contributor"
  principal_id         = var.principal_id
  principal_type       = var.principal_type
  description          = "leasehold: lease blobs in container ${var.container_name}"
}
