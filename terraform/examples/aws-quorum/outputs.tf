output "lease_url" {
  description = "The quorum lease URL, quorum:URL1,URL2,URL3 (each member's URL with ?region=): every worker's LEASEHOLD_LEASE (or leasehold run --lease), and leasehold check --lease URL, which checks each member and prints the quorum's cost."
  value       = local.lease_url
}

output "member_urls" {
  description = "The members' lease URLs, in the quorum's order: leasehold status --lease URL on one shows that member's record."
  value       = local.member_urls
}

output "role_name" {
  description = "The workers' role, which holds the three lease policies: role_name, or the role this example created."
  value       = local.role_name
}

output "task_role_arn" {
  description = "ARN of the ECS task role this example created (the task definition's task_role_arn); null when role_name names your own."
  value       = one(aws_iam_role.task[*].arn)
}

output "lease_policy_json" {
  description = "The role's lease policy for each member (member-1, member-2, member-3), to review."
  value       = { for k, p in module.lease_iam : k => p.policy_json }
}
