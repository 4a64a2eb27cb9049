# No output carries a secret: the account's keys and connection strings are
# not exported, and the workers authenticate with Entra ID.

output "storage_account_name" {
  description = "Name of the storage account (the account= of the lease URLs)."
  value       = azurerm_storage_account.this.name
}

output "storage_account_id" {
  description = "Resource ID of the storage account."
  value       = azurerm_storage_account.this.id
}

output "blob_endpoint" {
  description = "Blob service endpoint of the account (https://NAME.blob.core.windows.net/)."
  value       = azurerm_storage_account.this.primary_blob_endpoint
}

output "container_name" {
  description = "Name of the lease container."
  value       = azurerm_storage_container.leases.name
}

output "container_id" {
  description = "Resource ID of the lease container: the role assignment's scope."
  value       = azurerm_storage_container.leases.id
}

output "role_definition_id" {
  description = "Resource ID of the custom role, whose data actions are exactly azurelease.DataActions (blob read and write; no delete)."
  value       = azurerm_role_definition.lease.role_definition_resource_id
}

output "role_assignment_id" {
  description = "ID of the assignment of the custom role to principal_id on the container."
  value       = azurerm_role_assignment.lease.id
}

output "lease_urls" {
  description = "leasehold URL of each lease in lease_names (azblob://CONTAINER/NAME?account=ACCOUNT), by lease name: pass one to lease.Open, or to leasehold run --lease (LEASEHOLD_LEASE). With a user-assigned identity, also set AZURE_CLIENT_ID to its client ID."
  value       = { for n in var.lease_names : n => "azblob://${azurerm_storage_container.leases.name}/${n}?account=${azurerm_storage_account.this.name}" }
}
