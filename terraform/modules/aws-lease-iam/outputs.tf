output "policy_arn" {
  description = "ARN of the IAM policy."
  value       = aws_iam_policy.this.arn
}

output "policy_name" {
  description = "Name of the IAM policy."
  value       = aws_iam_policy.this.name
}

output "policy_json" {
  description = "The policy document, JSON: to review, or to use as an inline policy instead."
  value       = data.aws_iam_policy_document.this.json
}

output "attached_role_name" {
  description = "The role the policy is attached to, or null."
  value       = one(aws_iam_role_policy_attachment.this[*].role)
}
