# A Cloud Storage bucket for leasehold's lease objects (package
# lease/gcslease), or a prefix in an existing bucket, and a custom role with
# exactly the permissions the backend needs, granted to one service account
# on the bucket under an IAM condition that limits it to the lease objects
# (each named, with its probe object), or to the prefix when asked; for
# shard groups, also every object under each group's prefix, and a second
# role to list exactly those prefixes.
# Terraform never creates or deletes the objects: leasehold creates each on
# first use and keeps its fencing counter in it, so they must not be
# deleted.

locals {
  # gcslease.IAMPermissions: read the record, write it, and overwrite it
  # (Cloud Storage requires delete, with create, to replace an object:
  # every renewal does, and the probe's third step).
  lease_permissions = ["storage.objects.create", "storage.objects.delete", "storage.objects.get"]
  # gcslease.IAMGroupPermissions: a shard group's assigner lists the
  # group's objects.
  group_permissions = ["storage.objects.list"]

  bucket = var.create_bucket ? google_storage_bucket.leases[0].name : data.google_storage_bucket.existing[0].name

  # The lease objects' IAM resource names begin with this.
  object_prefix = "projects/_/buckets/${var.bucket_name}/objects/${var.prefix}/"
  # gcslease.ProbeSuffix: the object beside each lease that leasehold
  # creates, reads and overwrites, once per process and bucket, to check
  # that the store enforces generation preconditions.
  probe_suffix = ".leasehold-probe"
  # runner.CandidatesSuffix: with prefer, each lease's candidates' object
  # beside it (NAME.candidates), where leasehold run --prefer's instances
  # announce themselves and leasehold handoff asks, is granted as a lease
  # of its own, with its probe.
  candidates_suffix = ".candidates"
  names             = concat(var.lease_names, var.prefer ? [for n in var.lease_names : "${n}${local.candidates_suffix}"] : [])
  # Each lease object and its probe object, by IAM resource name.
  lease_objects = flatten([for n in local.names : ["${local.object_prefix}${n}", "${local.object_prefix}${n}${local.probe_suffix}"]])

  # Each shard group's objects begin with PREFIX/GROUP/: the workers name
  # theirs by their identities at run time.
  group_prefixes = [for g in var.shard_groups : "${var.prefix}/${g}/"]

  # The grant's condition: the objects of the leases in lease_names, each
  # by name, or (whole_prefix) every object under the prefix; and every
  # object of each shard group.
  lease_condition = join(" || ", concat(
    var.whole_prefix ? ["resource.name.startsWith(\"${local.object_prefix}\")"] : [for o in local.lease_objects : "resource.name == \"${o}\""],
    [for p in local.group_prefixes : "resource.name.startsWith(\"projects/_/buckets/${var.bucket_name}/objects/${p}\")"],
  ))

  # The listing's condition: the bucket (objects.list is checked on it),
  # listed with exactly a shard group's prefix, the one its assigner lists.
  group_list_condition = "resource.name == \"projects/_/buckets/${var.bucket_name}\" && (${join(" || ", [for p in local.group_prefixes : "api.getAttribute(\"storage.googleapis.com/objectListPrefix\", \"\") == \"${p}\""])})"
}

resource "google_storage_bucket" "leases" {
  count = var.create_bucket ? 1 : 0

  name          = var.bucket_name
  project       = var.project_id
  location      = var.location
  storage_class = "STANDARD"
  force_destroy = false
  labels        = var.labels

  # IAM only, no object ACLs: IAM conditions need it.
  uniform_bucket_level_access = true
  public_access_prevention    = "enforced"

  # Every renewal overwrites the lease object: kept generations, noncurrent
  # or soft-deleted (7 days by default), would each be billed as storage.
  versioning {
    enabled = false
  }
  soft_delete_policy {
    retention_duration_seconds = 0
  }
}

# With create_bucket = false: the existing bucket, looked up so that a
# misspelt name fails at plan time. It must have uniform bucket-level access
# for the conditional grant below.
data "google_storage_bucket" "existing" {
  count = var.create_bucket ? 0 : 1

  name = var.bucket_name
}

resource "google_project_iam_custom_role" "lease" {
  project     = var.project_id
  role_id     = var.role_id
  title       = "leasehold lease"
  description = "What leasehold's Cloud Storage backend (gcslease.IAMPermissions) needs on its lease objects."
  permissions = local.lease_permissions
}

# The role for one service account, on the lease objects only.
resource "google_storage_bucket_iam_member" "lease" {
  bucket = local.bucket
  role   = google_project_iam_custom_role.lease.name
  member = "serviceAccount:${var.service_account_email}"

  condition {
    title       = "leasehold lease objects"
    description = var.whole_prefix ? "Every object under ${var.prefix}/ in ${var.bucket_name}." : "Only the lease objects of lease_names (and their probe objects), and the objects of shard_groups, under ${var.prefix}/ in ${var.bucket_name}."
    expression  = local.lease_condition
  }
}

# Shard groups (shard_groups): a role to list objects, for the same service
# account on the bucket, only with a group's prefix.
resource "google_project_iam_custom_role" "group_list" {
  count = length(var.shard_groups) > 0 ? 1 : 0

  project     = var.project_id
  role_id     = "${var.role_id}GroupList"
  title       = "leasehold shard group listing"
  description = "What leasehold's Cloud Storage backend needs beyond its lease role for shard groups (gcslease.IAMGroupPermissions): listing the group's objects."
  permissions = local.group_permissions
}

resource "google_storage_bucket_iam_member" "group_list" {
  count = length(var.shard_groups) > 0 ? 1 : 0

  bucket = local.bucket
  role   = google_project_iam_custom_role.group_list[0].name
  member = "serviceAccount:${var.service_account_email}"

  condition {
    title       = "leasehold shard group listing"
    description = "Only listings of the shard groups' prefixes in ${var.bucket_name}."
    expression  = local.group_list_condition
  }
}
