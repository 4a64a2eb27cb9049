# An ECS Fargate service of desired_count tasks that all run
# `leasehold run -- COMMAND`: one task holds the lease and runs COMMAND, the
# others wait and take over when it stops or fails. Or, with
# schedule_expression, a scheduled task: an EventBridge rule starts a task
# per tick that runs `leasehold run --once --period TIME -- COMMAND`, so
# COMMAND runs once per tick however many tasks the tick starts. Or, with
# shards = N, a service of shard workers: every task runs
# `leasehold run --shards N -- COMMAND`, and the tasks share the N shards of
# a group, each shard's COMMAND running in one task at a time; an
# autoscaling target (max_count) scales the service out and back. The lease
# (or group) is an S3 object (prefix) or a DynamoDB item (a group's
# partition of a shard table), provisioned by the modules in ../../modules,
# and the task role may touch that lease or group and nothing else.

provider "aws" {
  region = var.region

  default_tags {
    tags = var.tags
  }
}

data "aws_caller_identity" "current" {}
data "aws_partition" "current" {}

locals {
  s3_prefix        = "leases"
  table_name       = "${var.name}-leases"
  shard_table_name = "${var.name}-shards"
  scheduled        = var.schedule_expression != null
  sharded          = var.shards > 0
  # A group's URL is its prefix: on S3 the URL a lease of that name would
  # have; on DynamoDB the group's partition of the shard table.
  lease_url = (var.backend == "s3" ? module.s3_lease[0].lease_urls[var.lease_name] :
    local.sharded ? "dynamodb://${module.dynamodb_lease[0].shard_table_name}/${var.lease_name}" :
  module.dynamodb_lease[0].lease_urls[var.lease_name])
  entry_point = (local.scheduled ? ["/leasehold", "run", "--once"] :
    local.sharded ? ["/leasehold", "run", "--shards", tostring(var.shards)] :
  ["/leasehold", "run"])
}

# ---- the lease ----------------------------------------------------------------

module "s3_lease" {
  source = "../../modules/aws-s3-lease"
  count  = var.backend == "s3" ? 1 : 0

  bucket_name = var.bucket_name
  prefix      = local.s3_prefix
  lease_names = [var.lease_name]
  # A demo: let terraform destroy remove the bucket and its lease objects.
  force_destroy = true
}

module "dynamodb_lease" {
  source = "../../modules/aws-dynamodb-lease"
  count  = var.backend == "dynamodb" ? 1 : 0

  table_name       = local.table_name
  lease_names      = local.sharded ? [] : [var.lease_name]
  shard_table_name = local.sharded ? local.shard_table_name : null
  # A demo: let terraform destroy remove the table.
  deletion_protection_enabled = false
}

# The task role's only permissions: the lease, exactly; or the shard
# group's objects, the listing of its prefix, and nothing of the lease
# table.
module "lease_iam" {
  source = "../../modules/aws-lease-iam"

  name                     = "${var.name}-lease"
  s3_bucket_arn            = var.backend == "s3" ? module.s3_lease[0].bucket_arn : null
  s3_prefix                = local.s3_prefix
  s3_lease_names           = local.sharded ? [] : [var.lease_name]
  s3_shard_groups          = local.sharded ? [var.lease_name] : []
  dynamodb_table_arn       = var.backend == "dynamodb" && !local.sharded ? module.dynamodb_lease[0].table_arn : null
  dynamodb_lease_names     = local.sharded ? [] : [var.lease_name]
  dynamodb_shard_table_arn = var.backend == "dynamodb" && local.sharded ? module.dynamodb_lease[0].shard_table_arn : null
  dynamodb_shard_groups    = local.sharded ? [var.lease_name] : []
  role_name                = aws_iam_role.task.name
}

# ---- roles ----------------------------------------------------------------------

data "aws_iam_policy_document" "ecs_tasks_assume" {
  statement {
    sid     = "EcsTasksOfThisAccount"
    effect  = "Allow"
    actions = ["sts:AssumeRole"]

    principals {
      type        = "Service"
      identifiers = ["ecs-tasks.amazonaws.com"]
    }

    condition {
      test     = "StringEquals"
      variable = "aws:SourceAccount"
      values   = [data.aws_caller_identity.current.account_id]
    }
  }
}

# The role your command (and leasehold) runs as.
resource "aws_iam_role" "task" {
  name               = "${var.name}-task"
  assume_role_policy = data.aws_iam_policy_document.ecs_tasks_assume.json
}

# The role ECS itself uses to pull the image and ship the logs.
resource "aws_iam_role" "execution" {
  name               = "${var.name}-execution"
  assume_role_policy = data.aws_iam_policy_document.ecs_tasks_assume.json
}

resource "aws_iam_role_policy_attachment" "execution" {
  role       = aws_iam_role.execution.name
  policy_arn = "arn:${data.aws_partition.current.partition}:iam::aws:policy/service-role/AmazonECSTaskExecutionRolePolicy"
}

# ---- the service ----------------------------------------------------------------

resource "aws_cloudwatch_log_group" "worker" {
  name              = "/ecs/${var.name}"
  retention_in_days = var.log_retention_days
}

resource "aws_ecs_cluster" "this" {
  name = var.name
}

resource "aws_ecs_task_definition" "worker" {
  family                   = var.name
  requires_compatibilities = ["FARGATE"]
  network_mode             = "awsvpc"
  cpu                      = var.cpu
  memory                   = var.memory
  task_role_arn            = aws_iam_role.task.arn
  execution_role_arn       = aws_iam_role.execution.arn

  runtime_platform {
    operating_system_family = "LINUX"
  }

  # entryPoint is leasehold's, from the leasehold image, with run: every
  # task campaigns, and the one holding the lease runs command (e.g.
  # ["/app/worker"]). A scheduled task runs once; the rule passes the tick's
  # time as its period (below). A shard worker runs command once per shard
  # it owns.
  container_definitions = jsonencode([{
    name       = "worker"
    image      = var.image
    essential  = true
    entryPoint = local.entry_point
    command    = concat(["--"], var.command)
    environment = [for k, v in merge(var.extra_environment, {
      LEASEHOLD_LEASE = local.lease_url
      AWS_REGION      = var.region
    }) : { name = k, value = v }]
    # SIGTERM, then this long to stop the command (or every shard's, each
    # with --grace) and release the lease (or the shards).
    stopTimeout = var.stop_timeout
    logConfiguration = {
      logDriver = "awslogs"
      options = {
        awslogs-group         = aws_cloudwatch_log_group.worker.name
        awslogs-region        = var.region
        awslogs-stream-prefix = "worker"
      }
    }
  }])
}

resource "aws_ecs_service" "worker" {
  count = local.scheduled ? 0 : 1

  name            = var.name
  cluster         = aws_ecs_cluster.this.id
  task_definition = aws_ecs_task_definition.worker.arn
  desired_count   = var.desired_count
  launch_type     = "FARGATE"

  network_configuration {
    subnets          = var.subnet_ids
    security_groups  = var.security_group_ids
    assign_public_ip = var.assign_public_ip
  }

  # The tasks may start only once they are allowed to touch the lease.
  depends_on = [module.lease_iam]
}

# ---- scaling the shard workers (with shards and max_count) -------------------------

# Application Auto Scaling keeps the service between desired_count and
# max_count tasks by CPU. A task added joins the group and takes its share
# of the shards; a task removed gets SIGTERM and hands its shards over
# within stop_timeout. terraform apply sets the count back to desired_count,
# and the policy scales from there.
resource "aws_appautoscaling_target" "workers" {
  count = local.sharded && var.max_count != null ? 1 : 0

  service_namespace  = "ecs"
  resource_id        = "service/${aws_ecs_cluster.this.name}/${aws_ecs_service.worker[0].name}"
  scalable_dimension = "ecs:service:DesiredCount"
  min_capacity       = var.desired_count
  max_capacity       = var.max_count
}

resource "aws_appautoscaling_policy" "cpu" {
  count = local.sharded && var.max_count != null ? 1 : 0

  name               = "${var.name}-cpu"
  policy_type        = "TargetTrackingScaling"
  service_namespace  = aws_appautoscaling_target.workers[0].service_namespace
  resource_id        = aws_appautoscaling_target.workers[0].resource_id
  scalable_dimension = aws_appautoscaling_target.workers[0].scalable_dimension

  target_tracking_scaling_policy_configuration {
    target_value = var.target_cpu_utilization
    # Every scale-in moves shards: wait for a steady load before it.
    scale_in_cooldown  = 300
    scale_out_cooldown = 60

    predefined_metric_specification {
      predefined_metric_type = "ECSServiceAverageCPUUtilization"
    }
  }
}

# ---- the schedule (with schedule_expression) --------------------------------------

# EventBridge starts one task per tick, with the tick's scheduled time (the
# event's "time", RFC 3339) as leasehold's period key: a tick delivered
# twice, or a task started late, finds the period in the lease record and
# exits 76 without running the command.
resource "aws_cloudwatch_event_rule" "schedule" {
  count = local.scheduled ? 1 : 0

  name                = var.name
  description         = "Runs ${var.name} once per tick"
  schedule_expression = var.schedule_expression
}

resource "aws_cloudwatch_event_target" "task" {
  count = local.scheduled ? 1 : 0

  rule     = aws_cloudwatch_event_rule.schedule[0].name
  arn      = aws_ecs_cluster.this.arn
  role_arn = aws_iam_role.events[0].arn

  ecs_target {
    task_definition_arn = aws_ecs_task_definition.worker.arn
    task_count          = 1
    launch_type         = "FARGATE"

    network_configuration {
      subnets          = var.subnet_ids
      security_groups  = var.security_group_ids
      assign_public_ip = var.assign_public_ip
    }
  }

  # The container's command becomes --period <time> -- COMMAND. jsonencode
  # would escape the placeholder's angle brackets, so it goes in after.
  input_transformer {
    input_paths = { time = "$.time" }
    input_template = replace(jsonencode({
      containerOverrides = [{ name = "worker", command = concat(["--period", "TICK_TIME", "--"], var.command) }]
    }), "TICK_TIME", "<time>")
  }
}

data "aws_iam_policy_document" "events_assume" {
  statement {
    sid     = "EventBridgeOfThisAccount"
    effect  = "Allow"
    actions = ["sts:AssumeRole"]

    principals {
      type        = "Service"
      identifiers = ["events.amazonaws.com"]
    }

    condition {
      test     = "StringEquals"
      variable = "aws:SourceAccount"
      values   = [data.aws_caller_identity.current.account_id]
    }
  }
}

# The role EventBridge starts the task as: this task definition, in this
# cluster, with its two roles.
resource "aws_iam_role" "events" {
  count = local.scheduled ? 1 : 0

  name               = "${var.name}-events"
  assume_role_policy = data.aws_iam_policy_document.events_assume.json
}

data "aws_iam_policy_document" "events" {
  statement {
    sid       = "RunTheTask"
    effect    = "Allow"
    actions   = ["ecs:RunTask"]
    resources = [aws_ecs_task_definition.worker.arn]

    condition {
      test     = "ArnEquals"
      variable = "ecs:cluster"
      values   = [aws_ecs_cluster.this.arn]
    }
  }

  statement {
    sid       = "PassTheTaskRoles"
    effect    = "Allow"
    actions   = ["iam:PassRole"]
    resources = [aws_iam_role.task.arn, aws_iam_role.execution.arn]

    condition {
      test     = "StringEquals"
      variable = "iam:PassedToService"
      values   = ["ecs-tasks.amazonaws.com"]
    }
  }
}

resource "aws_iam_role_policy" "events" {
  count = local.scheduled ? 1 : 0

  name   = "run-task"
  role   = aws_iam_role.events[0].id
  policy = data.aws_iam_policy_document.events.json
}
