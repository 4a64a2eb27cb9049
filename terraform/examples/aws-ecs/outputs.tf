output "lease_url" {
  description = "The lease the tasks compete for (their LEASEHOLD_LEASE)."
  value       = local.lease_url
}

output "cluster_name" {
  description = "Name of the ECS cluster."
  value       = aws_ecs_cluster.this.name
}

output "service_name" {
  description = "Name of the ECS service."
  value       = aws_ecs_service.worker.name
}

output "log_group_name" {
  description = "CloudWatch Logs group of the tasks: aws logs tail NAME --follow."
  value       = aws_cloudwatch_log_group.worker.name
}

output "task_role_arn" {
  description = "ARN of the task role (the workers' identity)."
  value       = aws_iam_role.task.arn
}

output "lease_policy_json" {
  description = "The task role's lease policy, to review."
  value       = module.lease_iam.policy_json
}
