output "function_name" {
  description = "Name of the Lambda function."
  value       = aws_lambda_function.this.function_name
}

output "lease_url" {
  description = "The lease the invocations compete for: leasehold status --lease URL shows the latest tick that ran."
  value       = module.dynamodb_lease.lease_urls[var.name]
}

output "rule_arn" {
  description = "ARN of the EventBridge schedule rule."
  value       = aws_cloudwatch_event_rule.schedule.arn
}

output "log_group_name" {
  description = "CloudWatch Logs group of the function: aws logs tail NAME --follow."
  value       = aws_cloudwatch_log_group.function.name
}
