# An Azure Container App of `replicas` replicas that all run
# `leasehold run -- COMMAND` as one user-assigned managed identity: one replica
# holds the lease (a blob) and runs COMMAND, the others wait and take over when
# it stops or fails. The storage account, container and role assignment come
# from ../../modules/azure-blob-lease: the identity may use blobs in the lease
# container and nothing else.

provider "azurerm" {
  features {}

  # The storage account allows no Shared Key access: Terraform, too, must
  # reach its blob service with Entra ID.
  storage_use_azuread = true

  # azurerm 5 registers no resource provider by default: these are the ones
  # this example uses.
  resource_providers_to_register = [
    "Microsoft.App",
    "Microsoft.ManagedIdentity",
    "Microsoft.OperationalInsights",
    "Microsoft.Storage",
  ]
}

locals {
  memory = "${var.cpu * 2}Gi"
}

resource "azurerm_resource_group" "this" {
  name     = "${var.name}-rg"
  location = var.location
  tags     = var.tags
}

# The identity the replicas run as.
resource "azurerm_user_assigned_identity" "worker" {
  name                = "${var.name}-worker"
  resource_group_name = azurerm_resource_group.this.name
  location            = azurerm_resource_group.this.location
  tags                = var.tags
}

module "lease" {
  source = "../../modules/azure-blob-lease"

  resource_group_name  = azurerm_resource_group.this.name
  location             = azurerm_resource_group.this.location
  storage_account_name = var.storage_account_name
  principal_id         = azurerm_user_assigned_identity.worker.principal_id
  lease_names          = [var.lease_name]
  tags                 = var.tags
}

resource "azurerm_log_analytics_workspace" "this" {
  name                = "${var.name}-logs"
  resource_group_name = azurerm_resource_group.this.name
  location            = azurerm_resource_group.this.location
  sku                 = "PerGB2018"
  retention_in_days   = 30
  tags                = var.tags
}

resource "azurerm_container_app_environment" "this" {
  name                       = "${var.name}-env"
  resource_group_name        = azurerm_resource_group.this.name
  location                   = azurerm_resource_group.this.location
  logs_destination           = "log-analytics"
  log_analytics_workspace_id = azurerm_log_analytics_workspace.this.id
  tags                       = var.tags
}

resource "azurerm_container_app" "worker" {
  name                         = var.name
  resource_group_name          = azurerm_resource_group.this.name
  container_app_environment_id = azurerm_container_app_environment.this.id
  revision_mode                = "Single"
  tags                         = var.tags

  identity {
    type         = "UserAssigned"
    identity_ids = [azurerm_user_assigned_identity.worker.id]
  }

  dynamic "registry" {
    for_each = var.registry_server != null ? [var.registry_server] : []
    content {
      server   = registry.value
      identity = azurerm_user_assigned_identity.worker.id
    }
  }

  template {
    # A fixed number of replicas: no scale rule, no ingress.
    min_replicas                     = var.replicas
    max_replicas                     = var.replicas
    termination_grace_period_seconds = var.termination_grace_period_seconds

    # command is leasehold's, from the leasehold image, with run: every
    # replica campaigns, and the one holding the lease runs args (e.g.
    # ["/app/worker"]).
    container {
      name    = "worker"
      image   = var.image
      cpu     = var.cpu
      memory  = local.memory
      command = ["/leasehold", "run", "--"]
      args    = var.command

      env {
        name  = "LEASEHOLD_LEASE"
        value = module.lease.lease_urls[var.lease_name]
      }

      # DefaultAzureCredential picks the user-assigned identity by its client ID.
      env {
        name  = "AZURE_CLIENT_ID"
        value = azurerm_user_assigned_identity.worker.client_id
      }

      dynamic "env" {
        for_each = var.extra_environment
        content {
          name  = env.key
          value = env.value
        }
      }
    }
  }

  # The replicas may start only once the identity may use the lease.
  depends_on = [module.lease]
}
