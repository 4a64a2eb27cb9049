# An AWS Lambda function (function/, in Go) that an EventBridge schedule
# invokes once per tick, and that runs its job at most once per tick however
# many times the tick is delivered: EventBridge delivers at least once, and
# Lambda retries a failed asynchronous invocation. The lease is a DynamoDB
# item, provisioned by ../../modules/aws-dynamodb-lease, and the function's
# role may touch that item, its own log streams, and nothing else.

provider "aws" {
  region = var.region

  default_tags {
    tags = var.tags
  }
}

data "aws_caller_identity" "current" {}

# ---- the lease ----------------------------------------------------------------

module "dynamodb_lease" {
  source = "../../modules/aws-dynamodb-lease"

  table_name  = "${var.name}-leases"
  lease_names = [var.name]
  # An example: let terraform destroy remove the table.
  deletion_protection_enabled = false
}

module "lease_iam" {
  source = "../../modules/aws-lease-iam"

  name                 = "${var.name}-lease"
  dynamodb_table_arn   = module.dynamodb_lease.table_arn
  dynamodb_lease_names = [var.name]
  role_name            = aws_iam_role.function.name
}

# ---- the function -------------------------------------------------------------

data "aws_iam_policy_document" "lambda_assume" {
  statement {
    sid     = "LambdaOfThisAccount"
    effect  = "Allow"
    actions = ["sts:AssumeRole"]

    principals {
      type        = "Service"
      identifiers = ["lambda.amazonaws.com"]
    }

    condition {
      test     = "StringEquals"
      variable = "aws:SourceAccount"
      values   = [data.aws_caller_identity.current.account_id]
    }
  }
}

resource "aws_iam_role" "function" {
  name               = "${var.name}-function"
  assume_role_policy = data.aws_iam_policy_document.lambda_assume.json
}

resource "aws_cloudwatch_log_group" "function" {
  name              = "/aws/lambda/${var.name}"
  retention_in_days = var.log_retention_days
}

# The function's own log streams, whose names Lambda makes up.
data "aws_iam_policy_document" "logs" {
  statement {
    sid       = "FunctionLogStreams"
    effect    = "Allow"
    actions   = ["logs:CreateLogStream", "logs:PutLogEvents"]
    resources = ["${aws_cloudwatch_log_group.function.arn}:log-stream:*"]
  }
}

resource "aws_iam_role_policy" "logs" {
  name   = "logs"
  role   = aws_iam_role.function.id
  policy = data.aws_iam_policy_document.logs.json
}

resource "aws_lambda_function" "this" {
  function_name    = var.name
  role             = aws_iam_role.function.arn
  runtime          = "provided.al2023"
  handler          = "bootstrap"
  architectures    = ["arm64"]
  filename         = var.package_path
  source_code_hash = filebase64sha256(var.package_path)
  timeout          = var.timeout
  memory_size      = 128

  environment {
    variables = {
      LEASE_URL = module.dynamodb_lease.lease_urls[var.name]
      LEASE_TTL = "${var.lease_ttl_seconds}s"
    }
  }

  logging_config {
    log_format = "JSON"
    log_group  = aws_cloudwatch_log_group.function.name
  }

  depends_on = [module.lease_iam, aws_iam_role_policy.logs]
}

# A failed run of the job fails the invocation; Lambda retries it, and the
# retry runs the job again (the function sets runner.Config.RetryFailed).
resource "aws_lambda_function_event_invoke_config" "this" {
  function_name                = aws_lambda_function.this.function_name
  maximum_retry_attempts       = var.retry_attempts
  maximum_event_age_in_seconds = var.max_event_age_seconds
}

# ---- the schedule ----------------------------------------------------------------

resource "aws_cloudwatch_event_rule" "schedule" {
  name                = var.name
  description         = "Runs ${var.name} once per tick"
  schedule_expression = var.schedule_expression
}

resource "aws_cloudwatch_event_target" "function" {
  rule = aws_cloudwatch_event_rule.schedule.name
  arn  = aws_lambda_function.this.arn
}

resource "aws_lambda_permission" "schedule" {
  statement_id  = "AllowEventBridgeSchedule"
  action        = "lambda:InvokeFunction"
  function_name = aws_lambda_function.this.function_name
  principal     = "events.amazonaws.com"
  source_arn    = aws_cloudwatch_event_rule.schedule.arn
}
