# A Cloud Run service of `instances` instances that all run
# `leasehold run -- COMMAND` as one service account: one instance holds the
# lease (an object in Cloud Storage) and runs COMMAND, the others wait and
# take over when it stops or fails. And a Cloud Run job that runs
# `leasehold run --once -- JOB_COMMAND`: a scheduled task that must not run
# twice at once. The bucket, the custom role and its conditional grant come
# from ../../modules/gcp-gcs-lease: the service account may use the lease
# objects and nothing else in the bucket.

provider "google" {
  project = var.project_id
  region  = var.region
}

# The identity the instances and the job run as.
resource "google_service_account" "worker" {
  account_id   = var.name
  display_name = "leasehold workers (${var.name})"
}

module "lease" {
  source = "../../modules/gcp-gcs-lease"

  project_id            = var.project_id
  bucket_name           = var.bucket_name
  location              = var.region
  service_account_email = google_service_account.worker.email
  lease_names           = [var.lease_name, var.job_lease_name]
}

locals {
  # Each instance needs an identity of its own. Cloud Run gives no unique
  # host name to rely on, so the wrapper adds random digits to the
  # revision's name (the image needs a POSIX shell and od).
  leasehold = ["/bin/sh", "-c", "exec leasehold run --identity \"$${K_REVISION:-$${CLOUD_RUN_EXECUTION:-run}}-$(od -An -N4 -tx4 /dev/urandom | tr -d ' ')\" \"$@\"", "leasehold"]
}

resource "google_cloud_run_v2_service" "worker" {
  name                = var.name
  location            = var.region
  ingress             = "INGRESS_TRAFFIC_INTERNAL_ONLY"
  deletion_protection = false

  template {
    service_account = google_service_account.worker.email

    # Every instance always runs: followers must poll and the leader must
    # renew between requests, which never come.
    scaling {
      min_instance_count = var.instances
      max_instance_count = var.instances
    }

    containers {
      image   = var.image
      command = local.leasehold
      args    = concat(["--"], var.command)

      # Instance-based billing: the CPU stays allocated between requests.
      # With request-based billing it is throttled to almost nothing, and
      # renewals would starve.
      resources {
        cpu_idle = false
        limits = {
          cpu    = "1"
          memory = "512Mi"
        }
      }

      env {
        name  = "LEASEHOLD_LEASE"
        value = module.lease.lease_urls[var.lease_name]
      }
      env {
        name  = "LEASEHOLD_GRACE"
        value = "10s"
      }
      env {
        name  = "LEASEHOLD_LOG_FORMAT"
        value = "json"
      }
      # Cloud Run's health checks reach leasehold's /healthz on $PORT.
      env {
        name  = "LEASEHOLD_LISTEN"
        value = ":8080"
      }
      ports {
        container_port = 8080
      }
      startup_probe {
        http_get {
          path = "/healthz"
        }
      }
      liveness_probe {
        http_get {
          path = "/healthz"
        }
      }
    }
  }
}

resource "google_cloud_run_v2_job" "nightly" {
  name                = "${var.name}-job"
  location            = var.region
  deletion_protection = false

  template {
    task_count = 1

    template {
      service_account = google_service_account.worker.email
      max_retries     = 0
      timeout         = "3600s"

      containers {
        image   = var.image
        command = local.leasehold
        # Exit 75 (not elected) when another execution holds the lease.
        args = concat(["--once", "--"], var.job_command)

        env {
          name  = "LEASEHOLD_LEASE"
          value = module.lease.lease_urls[var.job_lease_name]
        }
        env {
          name  = "LEASEHOLD_LOG_FORMAT"
          value = "json"
        }
      }
    }
  }
}
