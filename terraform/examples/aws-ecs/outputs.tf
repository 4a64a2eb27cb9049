output "lease_url" {
  description = "The lease the tasks compete for, or with shards the group they share (their LEASEHOLD_LEASE): leasehold status [--shards N] --lease URL."
  value       = local.lease_url
}

output "cluster_name" {
  description = "Name of the ECS cluster."
  value       = aws_ecs_cluster.this.name
}

output "service_name" {
  description = "Name of the ECS service; null for a scheduled task (schedule_expression)."
  value       = one(aws_ecs_service.worker[*].name)
}

output "schedule_rule_arn" {
  description = "ARN of the EventBridge rule that starts the scheduled task; null without schedule_expression."
  value       = one(aws_cloudwatch_event_rule.schedule[*].arn)
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

output "autoscaling_resource_id" {
  description = "The service's Application Auto Scaling resource (service/CLUSTER/SERVICE); null without max_count."
  value       = one(aws_appautoscaling_target.workers[*].resource_id)
}
