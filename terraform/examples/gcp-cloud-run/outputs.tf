output "lease_url" {
  description = "The service's lease: see who leads with gcloud storage cat, or leasehold status --lease."
  value       = module.lease.lease_urls[var.lease_name]
}

output "job_lease_url" {
  description = "The job's lease."
  value       = module.lease.lease_urls[var.job_lease_name]
}

output "service_account_email" {
  description = "The service account the service and the job run as."
  value       = google_service_account.worker.email
}

output "service_name" {
  description = "Name of the Cloud Run service."
  value       = google_cloud_run_v2_service.worker.name
}

output "job_name" {
  description = "Name of the Cloud Run job: gcloud run jobs execute NAME --region REGION, or trigger it from Cloud Scheduler."
  value       = google_cloud_run_v2_job.nightly.name
}
