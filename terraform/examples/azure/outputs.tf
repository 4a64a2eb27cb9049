output "lease_url" {
  description = "The lease the replicas compete for (their LEASEHOLD_LEASE)."
  value       = module.lease.lease_urls[var.lease_name]
}

output "resource_group_name" {
  description = "Name of the resource group holding everything."
  value       = azurerm_resource_group.this.name
}

output "container_app_name" {
  description = "Name of the container app."
  value       = azurerm_container_app.worker.name
}

output "identity_client_id" {
  description = "Client ID of the workers' user-assigned managed identity (their AZURE_CLIENT_ID)."
  value       = azurerm_user_assigned_identity.worker.client_id
}

output "storage_account_name" {
  description = "Name of the lease storage account."
  value       = module.lease.storage_account_name
}
