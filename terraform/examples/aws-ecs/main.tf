# An ECS Fargate service of desired_count tasks that all run
# `leasehold run -- COMMAND`: one task holds the lease and runs COMMAND, the
# others wait and take over when it stops or fails. The lease is an S3 object
# or a DynamoDB item, provisioned by the modules in ../../modules, and the
# task role may touch that lease and nothing else.

provider "aws" {
  region = var.region

  default_tags {
    tags = var.tags
  }
}

data "aws_caller_identity" "current" {}
data "aws_partition" "current" {}

locals {
  s3_prefix  = "leases"
  table_name = "${var.name}-leases"
  lease_url  = var.backend == "s3" ? module.s3_lease[0].lease_urls[var.lease_name] : module.dynamodb_lease[0].lease_urls[var.lease_name]
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

  table_name  = local.table_name
  lease_names = [var.lease_name]
  # A demo: let terraform destroy remove the table.
  deletion_protection_enabled = false
}

# The task role's only permissions: the lease, exactly.
module "lease_iam" {
  source = "../../modules/aws-lease-iam"

  name                 = "${var.name}-lease"
  s3_bucket_arn        = var.backend == "s3" ? module.s3_lease[0].bucket_arn : null
  s3_prefix            = local.s3_prefix
  s3_lease_names       = [var.lease_name]
  dynamodb_table_arn   = var.backend == "dynamodb" ? module.dynamodb_lease[0].table_arn : null
  dynamodb_lease_names = [var.lease_name]
  role_name            = aws_iam_role.task.name
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
  # ["/app/worker"]).
  container_definitions = jsonencode([{
    name       = "worker"
    image      = var.image
    essential  = true
    entryPoint = ["/leasehold", "run", "--"]
    command    = var.command
    environment = [for k, v in merge(var.extra_environment, {
      LEASEHOLD_LEASE = local.lease_url
      AWS_REGION      = var.region
    }) : { name = k, value = v }]
    # SIGTERM, then this long to stop the command and release the lease.
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
