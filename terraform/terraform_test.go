// Package terraform_test checks the Terraform modules against the Go code
// they provision for, by static analysis of the .tf files (HCL native
// syntax): no terraform binary, no provider, no cloud. What each backend
// declares (the grants of its driver.Store, which leasehold help prints and
// each backend's TestCallsAreGranted checks against the calls it makes;
// its DynamoDB key; its URL scheme) is read from the backend packages, so
// changing one side without the other fails here.
package terraform_test

import (
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/leasehold/leasehold/lease/azurelease"
	"github.com/leasehold/leasehold/lease/driver"
	"github.com/leasehold/leasehold/lease/dynamolease"
	"github.com/leasehold/leasehold/lease/gcslease"
	"github.com/leasehold/leasehold/lease/quorumlease"
	"github.com/leasehold/leasehold/lease/s3lease"
	"github.com/leasehold/leasehold/runner"
)

// The modules and examples, as directories under terraform/.
var (
	modules  = []string{"modules/aws-s3-lease", "modules/aws-dynamodb-lease", "modules/aws-lease-iam", "modules/azure-blob-lease", "modules/gcp-gcs-lease"}
	examples = []string{"examples/aws-ecs", "examples/aws-lambda-scheduled", "examples/aws-quorum", "examples/azure", "examples/gcp-cloud-run"}
)

// kmsActions are what S3 needs from a caller on a customer-managed KMS key
// that encrypts the lease objects: Decrypt for GetObject, GenerateDataKey for
// PutObject. No backend declares them (S3 calls KMS, not leasehold); the IAM
// module grants them only when given the key, through S3 only.
var kmsActions = []string{"kms:Decrypt", "kms:GenerateDataKey"}

// prefixWildcardSid is the one statement whose resource may end in a
// wildcard: the lease objects under a prefix, granted only when the user asks
// for a whole prefix (s3_whole_prefix), for lease names chosen at run time.
const prefixWildcardSid = "LeaseObjectsUnderPrefix"

// groupWildcardSid grants the objects of shard groups, under each group's
// prefix: their names (the workers' identities) are chosen at run time.
const groupWildcardSid = "ShardGroupObjects"

// logStreamsSid is the other: a Lambda function's log streams in its own
// log group, whose names Lambda makes up.
const logStreamsSid = "FunctionLogStreams"

func TestDynamoDBTableHasTheBackendsKeySchema(t *testing.T) {
	m := load(t, "modules/aws-dynamodb-lease")
	table := m.resource(t, "aws_dynamodb_table", "this")

	if got := m.stringOf(t, attr(t, table, "hash_key")); got != dynamolease.DefaultKeyAttribute {
		t.Errorf("aws_dynamodb_table.this: hash_key is %q, want dynamolease.DefaultKeyAttribute %q", got, dynamolease.DefaultKeyAttribute)
	}
	if _, ok := table.Body.Attributes["range_key"]; ok {
		t.Errorf("aws_dynamodb_table.this has a range_key: the backend wants a table with one HASH key and no sort key")
	}
	attrs := blocksOf(table.Body, "attribute")
	if len(attrs) != 1 {
		t.Fatalf("aws_dynamodb_table.this declares %d attribute blocks, want exactly 1 (the hash key)", len(attrs))
	}
	if got := m.stringOf(t, attr(t, attrs[0], "name")); got != dynamolease.DefaultKeyAttribute {
		t.Errorf("aws_dynamodb_table.this: attribute name is %q, want %q", got, dynamolease.DefaultKeyAttribute)
	}
	if got := m.stringOf(t, attr(t, attrs[0], "type")); got != "S" {
		t.Errorf("aws_dynamodb_table.this: key attribute type is %q, want \"S\"", got)
	}
	if got := m.stringOf(t, attr(t, table, "billing_mode")); got != "PAY_PER_REQUEST" {
		t.Errorf("aws_dynamodb_table.this: billing_mode is %q, want PAY_PER_REQUEST", got)
	}
	// DynamoDB TTL would delete lease items, and with them the fencing
	// counters; the item's ttl_ms is a duration, not an expiry time.
	if ttl := blocksOf(table.Body, "ttl"); len(ttl) > 0 {
		t.Errorf("aws_dynamodb_table.this has a ttl block (%s): DynamoDB TTL must never delete lease items", ttl[0].DefRange())
	}
	if got := m.stringOf(t, m.local(t, "default_key_attribute")); got != dynamolease.DefaultKeyAttribute {
		t.Errorf("local.default_key_attribute (which URLs leave out) is %q, want %q", got, dynamolease.DefaultKeyAttribute)
	}
}

func TestDynamoDBShardTableHasObjectsKeySchema(t *testing.T) {
	m := load(t, "modules/aws-dynamodb-lease")
	table := m.resource(t, "aws_dynamodb_table", "shards")
	if got := m.stringOf(t, attr(t, table, "hash_key")); got != dynamolease.DefaultGroupAttribute {
		t.Errorf("aws_dynamodb_table.shards: hash_key is %q, want dynamolease.DefaultGroupAttribute %q", got, dynamolease.DefaultGroupAttribute)
	}
	if got := m.stringOf(t, attr(t, table, "range_key")); got != dynamolease.DefaultObjectKeyAttribute {
		t.Errorf("aws_dynamodb_table.shards: range_key is %q, want dynamolease.DefaultObjectKeyAttribute %q", got, dynamolease.DefaultObjectKeyAttribute)
	}
	var names []string
	for _, a := range blocksOf(table.Body, "attribute") {
		names = append(names, m.stringOf(t, attr(t, a, "name")))
		if got := m.stringOf(t, attr(t, a, "type")); got != "S" {
			t.Errorf("aws_dynamodb_table.shards: attribute %s has type %q, want \"S\"", names[len(names)-1], got)
		}
	}
	if want := []string{dynamolease.DefaultGroupAttribute, dynamolease.DefaultObjectKeyAttribute}; !slices.Equal(sorted(names), sorted(want)) {
		t.Errorf("aws_dynamodb_table.shards declares the attributes %v, want exactly the keys %v", names, want)
	}
	if got := m.stringOf(t, attr(t, table, "billing_mode")); got != "PAY_PER_REQUEST" {
		t.Errorf("aws_dynamodb_table.shards: billing_mode is %q, want PAY_PER_REQUEST", got)
	}
	if ttl := blocksOf(table.Body, "ttl"); len(ttl) > 0 {
		t.Errorf("aws_dynamodb_table.shards has a ttl block (%s): DynamoDB TTL must never delete lease items", ttl[0].DefRange())
	}
}

func TestIAMPolicyGrantsExactlyWhatTheBackendsDeclare(t *testing.T) {
	m := load(t, "modules/aws-lease-iam")
	doc := m.data(t, "aws_iam_policy_document", "this")
	stmts := m.statements(t, doc)

	// What the backends declare (driver.Store), by the resource each
	// statement grants on.
	want := map[string][]string{
		"LeaseObjects":      grantOn(t, s3lease.Description, "arn:aws:s3:::BUCKET/KEY"),
		"LeaseProbeObjects": grantOn(t, s3lease.Description, "arn:aws:s3:::BUCKET/KEY"+s3lease.ProbeSuffix),
		prefixWildcardSid:   grantOn(t, s3lease.Description, "arn:aws:s3:::BUCKET/KEY"),
		"LeaseBucket":       grantOn(t, s3lease.Description, "arn:aws:s3:::BUCKET"),
		groupWildcardSid:    groupGrantOn(t, s3lease.Description, "arn:aws:s3:::BUCKET/GROUP/*"),
		"ShardGroupList":    groupGrantOn(t, s3lease.Description, "arn:aws:s3:::BUCKET"),
		"LeaseObjectsKMS":   kmsActions,
		"LeaseTable":        leaseGranted(dynamolease.Description),
		"ShardTable":        groupGrantOn(t, dynamolease.Description, "arn:aws:dynamodb:REGION:ACCOUNT:table/GROUPTABLE"),
	}
	seen := map[string]bool{}
	for _, s := range stmts {
		wantActions, ok := want[s.sid]
		if !ok {
			t.Errorf("%s: statement %q is not one the test knows; each statement must grant one backend's declared actions", s.pos, s.sid)
			continue
		}
		seen[s.sid] = true
		if s.effect != "Allow" {
			t.Errorf("%s: statement %q has effect %q, want Allow", s.pos, s.sid, s.effect)
		}
		if !slices.Equal(sorted(s.actions), sorted(wantActions)) {
			t.Errorf("%s: statement %q grants %v, want exactly %v", s.pos, s.sid, sorted(s.actions), sorted(wantActions))
		}
	}
	for sid := range want {
		if !seen[sid] {
			t.Errorf("no statement %q in data.aws_iam_policy_document.this", sid)
		}
	}

	// Across statements, per service: the union is exactly what the
	// backends declare, no more, no less.
	union := map[string][]string{}
	for _, s := range stmts {
		for _, a := range s.actions {
			svc, _, _ := strings.Cut(a, ":")
			union[svc] = append(union[svc], a)
		}
	}
	for svc, declared := range map[string][]string{
		"s3":       allGranted(s3lease.Description),
		"dynamodb": allGranted(dynamolease.Description),
		"kms":      kmsActions,
	} {
		if !slices.Equal(dedup(union[svc]), dedup(declared)) {
			t.Errorf("the policy grants %s actions %v, want exactly %v", svc, dedup(union[svc]), dedup(declared))
		}
		delete(union, svc)
	}
	for svc, actions := range union {
		t.Errorf("the policy grants %v: no backend declares %s actions", actions, svc)
	}

	// Resources: the bucket, the table, the key, the lease objects.
	for _, c := range []struct {
		sid, resources string
	}{
		{"LeaseBucket", "[var.s3_bucket_arn]"},
		{"LeaseTable", "[var.dynamodb_table_arn]"},
		{"ShardTable", "[var.dynamodb_shard_table_arn]"},
		{"LeaseObjectsKMS", "[var.s3_kms_key_arn]"},
		{"LeaseObjects", `[for k in local.s3_lease_keys : "${var.s3_bucket_arn}/${k}"]`},
		{"LeaseProbeObjects", `[for k in local.s3_probe_keys : "${var.s3_bucket_arn}/${k}"]`},
		{prefixWildcardSid, `["${var.s3_bucket_arn}/${var.s3_prefix}/*"]`},
		{groupWildcardSid, `[for p in local.s3_group_prefixes : "${var.s3_bucket_arn}/${p}*"]`},
		{"ShardGroupList", "[var.s3_bucket_arn]"},
	} {
		s := find(stmts, c.sid)
		if s == nil {
			continue // reported above
		}
		if got := squeeze(s.resources); got != squeeze(c.resources) {
			t.Errorf("%s: statement %q has resources %s, want %s", s.pos, c.sid, got, c.resources)
		}
	}
	if got := m.stringOf(t, m.local(t, "s3_probe_suffix")); got != s3lease.ProbeSuffix {
		t.Errorf("local.s3_probe_suffix is %q, want s3lease.ProbeSuffix %q", got, s3lease.ProbeSuffix)
	}
	// kms:ViaService names S3 in the bucket's region, the key's (S3 uses
	// an SSE-KMS key of the bucket's region only), not the provider's.
	if s := find(stmts, "LeaseObjectsKMS"); s != nil {
		if got := squeeze(s.conditionValues["kms:ViaService"]); got != `["s3.${local.s3_kms_region}.amazonaws.com"]` {
			t.Errorf("%s: kms:ViaService is %s, want S3 in the key's region, local.s3_kms_region", s.pos, got)
		}
		if got := squeeze(m.source(m.local(t, "s3_kms_region"))); got != `var.s3_kms_key_arn!=null?split(":",var.s3_kms_key_arn)[3]:null` {
			t.Errorf("local.s3_kms_region = %s, want the region field of var.s3_kms_key_arn", got)
		}
	}
	if len(m.blocks("data", "aws_region")) > 0 {
		t.Errorf("the policy reads data.aws_region: the provider's region is not the bucket's")
	}
	if s := find(stmts, prefixWildcardSid); s != nil && !strings.Contains(s.forEach, "var.s3_whole_prefix") {
		t.Errorf("%s: statement %q must exist only when the user asks for a whole prefix (var.s3_whole_prefix); its for_each is %s", s.pos, prefixWildcardSid, s.forEach)
	}
	// A shard group's listing is limited to exactly its prefix, the one
	// its assigner lists (Group + "/").
	if s := find(stmts, "ShardGroupList"); s != nil && squeeze(s.conditionValues["s3:prefix"]) != "local.s3_group_prefixes" {
		t.Errorf("%s: ShardGroupList's s3:prefix is %s, want local.s3_group_prefixes", s.pos, s.conditionValues["s3:prefix"])
	}
	if got := squeeze(m.source(m.local(t, "s3_group_prefixes"))); got != squeeze(`[for g in var.s3_shard_groups : "${var.s3_prefix}/${g}/"]`) {
		t.Errorf("local.s3_group_prefixes = %s, want each group's prefix, PREFIX/GROUP/", got)
	}
	// ListBucket is limited to the lease keys with s3:prefix, as the
	// backend's grants say (driver.Grant.Condition, which leasehold help
	// prints); the table grant can be limited to the lease items with
	// dynamodb:LeadingKeys.
	conditions := map[string]string{
		"LeaseBucket":    grantFor(t, s3lease.Description, "arn:aws:s3:::BUCKET", false).Condition.Key,
		"ShardGroupList": grantFor(t, s3lease.Description, "arn:aws:s3:::BUCKET", true).Condition.Key,
		"LeaseTable":     "dynamodb:LeadingKeys",
		"ShardTable":     "dynamodb:LeadingKeys",
	}
	for sid, key := range conditions {
		if key == "" {
			t.Errorf("statement %q has an s3:prefix condition, and s3lease's grant on its resource none (driver.Grant.Condition)", sid)
			continue
		}
		if s := find(stmts, sid); s != nil && !slices.Contains(s.conditionKeys, key) {
			t.Errorf("%s: statement %q has no %s condition (conditions on %v)", s.pos, sid, key, s.conditionKeys)
		}
	}
}

func TestNoPolicyGrantsWildcards(t *testing.T) {
	for _, dir := range slices.Concat(modules, examples) {
		m := load(t, dir)
		for _, doc := range m.blocks("data", "aws_iam_policy_document") {
			for _, s := range m.statements(t, doc) {
				if s.effect == "Deny" {
					// A Deny takes permissions away: its wildcards grant
					// nothing (the bucket's TLS-only policy denies s3:* to *).
					continue
				}
				for _, a := range s.actions {
					if strings.Contains(a, "*") || strings.Contains(a, "?") {
						t.Errorf("%s: statement %q allows the wildcard action %q", s.pos, s.sid, a)
					}
				}
				if strings.Contains(s.resources, "*") && s.sid != prefixWildcardSid && s.sid != groupWildcardSid && !(s.sid == logStreamsSid && strings.HasSuffix(squeeze(s.resources), `:log-stream:*"]`)) {
					t.Errorf("%s: statement %q allows a wildcard resource %s (only %q may, for a whole prefix, and %q, for a log group's streams)", s.pos, s.sid, squeeze(s.resources), prefixWildcardSid, logStreamsSid)
				}
				if strings.Contains(s.principals, `"*"`) {
					t.Errorf("%s: statement %q allows any principal", s.pos, s.sid)
				}
			}
		}
	}
}

func TestS3BucketIsPrivateEncryptedAndTLSOnly(t *testing.T) {
	m := load(t, "modules/aws-s3-lease")

	ownership := m.resource(t, "aws_s3_bucket_ownership_controls", "this")
	if got := m.stringOf(t, attr(t, oneBlock(t, ownership, "rule"), "object_ownership")); got != "BucketOwnerEnforced" {
		t.Errorf("object_ownership is %q, want BucketOwnerEnforced", got)
	}
	pab := m.resource(t, "aws_s3_bucket_public_access_block", "this")
	for _, name := range []string{"block_public_acls", "block_public_policy", "ignore_public_acls", "restrict_public_buckets"} {
		if v := m.value(t, attr(t, pab, name)); !v.RawEquals(cty.True) {
			t.Errorf("aws_s3_bucket_public_access_block.this: %s is %#v, want true", name, v)
		}
	}
	sse := m.resource(t, "aws_s3_bucket_server_side_encryption_configuration", "this")
	byDefault := oneBlock(t, oneBlock(t, sse, "rule"), "apply_server_side_encryption_by_default")
	if got := m.stringOf(t, attr(t, byDefault, "sse_algorithm")); got != "AES256" && got != "aws:kms" {
		t.Errorf("sse_algorithm is %q, want AES256 or aws:kms", got)
	}
	if v := m.variableDefault(t, "versioning_enabled"); !v.RawEquals(cty.False) {
		t.Errorf("var.versioning_enabled defaults to %#v, want false", v)
	}
	// Versioning and the rule expiring noncurrent versions come together.
	versioning := m.resource(t, "aws_s3_bucket_versioning", "this")
	lifecycle := m.resource(t, "aws_s3_bucket_lifecycle_configuration", "this")
	if a, b := m.source(attr(t, versioning, "count")), m.source(attr(t, lifecycle, "count")); a != b || !strings.Contains(a, "var.versioning_enabled") {
		t.Errorf("versioning (count = %s) and the noncurrent-version lifecycle rule (count = %s) must both follow var.versioning_enabled", a, b)
	}
	if len(blocksOf(oneBlock(t, lifecycle, "rule").Body, "noncurrent_version_expiration")) != 1 {
		t.Errorf("the lifecycle rule does not expire noncurrent versions")
	}

	deny := m.statements(t, m.data(t, "aws_iam_policy_document", "tls_only"))
	if len(deny) != 1 || deny[0].effect != "Deny" || !slices.Contains(deny[0].conditionKeys, "aws:SecureTransport") {
		t.Fatalf("the bucket policy must be one Deny statement on aws:SecureTransport, got %+v", deny)
	}
	if got := squeeze(deny[0].conditionValues["aws:SecureTransport"]); got != `["false"]` {
		t.Errorf("the TLS-only statement denies when aws:SecureTransport is %s, want [\"false\"]", got)
	}

	// The examples' buckets are the module's, as it makes them: each
	// example creates its buckets with the module (not an existing bucket,
	// whose settings are its owner's) and sets none of a bucket's
	// resources itself (a policy or an access block of its own would
	// replace the module's).
	for _, dir := range examples {
		e := load(t, dir)
		for _, b := range e.blocks("module") {
			if !strings.HasSuffix(e.stringOf(t, attr(t, b, "source")), "modules/aws-s3-lease") {
				continue
			}
			if a, ok := b.Body.Attributes["create_bucket"]; ok {
				t.Errorf("%s: module.%s sets create_bucket = %s: an example's bucket is the module's, private, encrypted and TLS-only", a.SrcRange, b.Labels[0], e.source(a.Expr))
			}
		}
		for _, b := range e.blocks("resource") {
			if strings.HasPrefix(b.Labels[0], "aws_s3_bucket") {
				t.Errorf("%s: %s.%s: an example leaves its buckets' settings to module aws-s3-lease", b.DefRange(), b.Labels[0], b.Labels[1])
			}
		}
	}
}

// TestNoLifecycleRuleTouchesLeaseRecords: lifecycle rules must never
// delete or archive a current lease object or blob: it carries the fencing
// counter. The S3 module's rules may act on noncurrent versions only, and
// the Azure module adds no management policy.
func TestNoLifecycleRuleTouchesLeaseRecords(t *testing.T) {
	s3 := load(t, "modules/aws-s3-lease")
	for _, lc := range s3.blocks("resource", "aws_s3_bucket_lifecycle_configuration") {
		for _, rule := range blocksOf(lc.Body, "rule") {
			for _, b := range rule.Body.Blocks {
				if typ := b.Type; typ == "dynamic" || !strings.HasPrefix(typ, "noncurrent_version_") && typ != "filter" && typ != "abort_incomplete_multipart_upload" {
					t.Errorf("%s: lifecycle rule has a block of type %q; only noncurrent versions may expire", b.DefRange(), typ)
				}
			}
		}
	}
	if ps := load(t, "modules/azure-blob-lease").blocks("resource", "azurerm_storage_management_policy"); len(ps) != 0 {
		t.Errorf("%s: the Azure module must add no lifecycle management policy: one that deletes blobs idle for N days deletes a long-lived leader's blob (lease operations do not update Last-Modified)", ps[0].DefRange())
	}
}

func TestAzureRoleIsTheBackendsOnTheContainerOnly(t *testing.T) {
	m := load(t, "modules/azure-blob-lease")

	// A custom role whose data actions are exactly what azurelease
	// declares (driver.Store), and nothing else: no delete, no control
	// plane action, no built-in role.
	defs := m.blocks("resource", "azurerm_role_definition")
	if len(defs) != 1 {
		t.Fatalf("%d azurerm_role_definition resources, want exactly 1", len(defs))
	}
	perms := oneBlock(t, defs[0], "permissions")
	dataActions := m.strings(t, m.local(t, "lease_data_actions"))
	if got := m.source(attr(t, perms, "data_actions")); got != "local.lease_data_actions" {
		t.Errorf("the role's data_actions = %s, want local.lease_data_actions", got)
	}
	if !slices.Equal(sorted(dataActions), sorted(allGranted(azurelease.Description))) {
		t.Errorf("local.lease_data_actions is %v, want exactly what azurelease declares, %v", sorted(dataActions), sorted(allGranted(azurelease.Description)))
	}
	for _, a := range dataActions {
		if strings.Contains(a, "delete") || strings.Contains(a, "*") {
			t.Errorf("the role grants %q: no delete, no wildcard (a deleted lease blob restarts the fencing tokens)", a)
		}
	}
	if got := m.strings(t, attr(t, perms, "actions")); len(got) != 0 {
		t.Errorf("the role grants control-plane actions %v, want none", got)
	}

	assignments := m.blocks("resource", "azurerm_role_assignment")
	if len(assignments) != 1 {
		t.Fatalf("%d azurerm_role_assignment resources, want exactly 1", len(assignments))
	}
	ra := assignments[0]
	if _, ok := ra.Body.Attributes["role_definition_name"]; ok {
		t.Errorf("%s: the assignment names a built-in role: it must assign the module's custom role", ra.DefRange())
	}
	if got := m.source(attr(t, ra, "role_definition_id")); got != "azurerm_role_definition."+defs[0].Labels[1]+".role_definition_resource_id" {
		t.Errorf("the assignment's role_definition_id is %s, want the custom role's", got)
	}
	// The scope is a container of this module: not the account, the
	// resource group or the subscription.
	scope := m.source(attr(t, ra, "scope"))
	ref := regexp.MustCompile(`^azurerm_storage_container\.([a-z0-9_]+)\.id$`).FindStringSubmatch(scope)
	if ref == nil {
		t.Fatalf("%s: the role assignment's scope is %s, want azurerm_storage_container.NAME.id", ra.DefRange(), scope)
	}
	container := m.resource(t, "azurerm_storage_container", ref[1])
	if got := m.stringOf(t, attr(t, container, "container_access_type")); got != "private" {
		t.Errorf("azurerm_storage_container.%s: container_access_type is %q, want private", ref[1], got)
	}

	account := m.resource(t, "azurerm_storage_account", "this")
	for name, want := range map[string]cty.Value{
		"min_tls_version":                 cty.StringVal("TLS1_2"),
		"https_traffic_only_enabled":      cty.True,
		"allow_nested_items_to_be_public": cty.False,
	} {
		if got := m.value(t, attr(t, account, name)); !got.RawEquals(want) {
			t.Errorf("azurerm_storage_account.this: %s is %#v, want %#v", name, got, want)
		}
	}
	if got := m.value(t, attr(t, account, "shared_access_key_enabled")); !got.RawEquals(cty.False) {
		t.Errorf("azurerm_storage_account.this: shared_access_key_enabled defaults to %#v, want false", got)
	}
}

func TestGCSRoleIsTheBackendsOnTheLeaseObjectsOnly(t *testing.T) {
	m := load(t, "modules/gcp-gcs-lease")

	perms := m.strings(t, m.local(t, "lease_permissions"))
	if declared := leaseGranted(gcslease.Description); !slices.Equal(sorted(perms), sorted(declared)) {
		t.Errorf("local.lease_permissions is %v, want exactly what gcslease declares for a lease, %v", sorted(perms), sorted(declared))
	}
	// The probe object needs them too (its check overwrites it), and so
	// does every object of a shard group.
	if probe := grantOn(t, gcslease.Description, "projects/_/buckets/BUCKET/objects/OBJECT"+gcslease.ProbeSuffix); !slices.Equal(sorted(probe), sorted(perms)) {
		t.Errorf("the probe object's grant is %v, want the role's %v: the condition grants the role on it", probe, perms)
	}
	if group := groupGrantOn(t, gcslease.Description, "projects/_/buckets/BUCKET/objects/GROUP/*"); !slices.Equal(sorted(group), sorted(perms)) {
		t.Errorf("a shard group's objects' grant is %v, want the role's %v: the condition grants the role on them", group, perms)
	}
	listing := m.strings(t, m.local(t, "group_permissions"))
	if declared := groupGrantOn(t, gcslease.Description, "projects/_/buckets/BUCKET"); !slices.Equal(sorted(listing), sorted(declared)) {
		t.Errorf("local.group_permissions is %v, want exactly what gcslease declares for a shard group's listing, %v", sorted(listing), sorted(declared))
	}
	role := m.resource(t, "google_project_iam_custom_role", "lease")
	if got := m.source(attr(t, role, "permissions")); got != "local.lease_permissions" {
		t.Errorf("google_project_iam_custom_role.lease: permissions = %s, want local.lease_permissions", got)
	}
	if got := m.source(attr(t, m.resource(t, "google_project_iam_custom_role", "group_list"), "permissions")); got != "local.group_permissions" {
		t.Errorf("google_project_iam_custom_role.group_list: permissions = %s, want local.group_permissions", got)
	}

	// Two grants, of those roles, to one service account, on the bucket,
	// each under a condition; nothing granted elsewhere.
	for _, typ := range []string{"google_storage_bucket_iam_binding", "google_storage_bucket_iam_policy", "google_project_iam_member", "google_project_iam_binding"} {
		if b := m.blocks("resource", typ); len(b) > 0 {
			t.Errorf("%s: a %s: the module grants only through google_storage_bucket_iam_member", b[0].DefRange(), typ)
		}
	}
	if members := m.blocks("resource", "google_storage_bucket_iam_member"); len(members) != 2 {
		t.Fatalf("%d google_storage_bucket_iam_member resources, want exactly 2 (lease, group_list)", len(members))
	}
	for name, want := range map[string]struct{ role, condition string }{
		"lease":      {"google_project_iam_custom_role.lease.name", "local.lease_condition"},
		"group_list": {"google_project_iam_custom_role.group_list[0].name", "local.group_list_condition"},
	} {
		member := m.resource(t, "google_storage_bucket_iam_member", name)
		if got := m.source(attr(t, member, "role")); got != want.role {
			t.Errorf("google_storage_bucket_iam_member.%s: role is %s, want %s", name, got, want.role)
		}
		if got := m.source(attr(t, member, "member")); got != `"serviceAccount:${var.service_account_email}"` {
			t.Errorf("google_storage_bucket_iam_member.%s: member is %s, want the one service account", name, got)
		}
		if got := m.source(attr(t, oneBlock(t, member, "condition"), "expression")); got != want.condition {
			t.Errorf("google_storage_bucket_iam_member.%s: condition is %s, want %s", name, got, want.condition)
		}
	}
	// The condition names each lease object and its probe object, or,
	// only when asked (whole_prefix), the prefix; and each shard group's
	// prefix.
	cond := squeeze(m.source(m.local(t, "lease_condition")))
	want := squeeze(`join(" || ", concat(
    var.whole_prefix ? ["resource.name.startsWith(\"${local.object_prefix}\")"] : [for o in local.lease_objects : "resource.name == \"${o}\""],
    [for p in local.group_prefixes : "resource.name.startsWith(\"projects/_/buckets/${var.bucket_name}/objects/${p}\")"],
  ))`)
	if cond != want {
		t.Errorf("local.lease_condition = %s, want %s", cond, want)
	}
	// Listing is allowed on the bucket only with exactly a group's prefix,
	// the one its assigner lists (Group + "/").
	if got := squeeze(m.source(m.local(t, "group_prefixes"))); got != squeeze(`[for g in var.shard_groups : "${var.prefix}/${g}/"]`) {
		t.Errorf("local.group_prefixes = %s, want each group's prefix, PREFIX/GROUP/", got)
	}
	listCond := squeeze(m.source(m.local(t, "group_list_condition")))
	for _, part := range []string{`resource.name==\"projects/_/buckets/${var.bucket_name}\"`, `api.getAttribute(\"storage.googleapis.com/objectListPrefix\",\"\")==\"${p}\"`, "forpinlocal.group_prefixes"} {
		if !strings.Contains(listCond, part) {
			t.Errorf("local.group_list_condition = %s, want it to hold %s", listCond, part)
		}
	}
	objects := squeeze(m.source(m.local(t, "lease_objects")))
	if want := squeeze(`flatten([for n in local.names : ["${local.object_prefix}${n}", "${local.object_prefix}${n}${local.probe_suffix}"]])`); objects != want {
		t.Errorf("local.lease_objects = %s, want each lease object and its probe object, %s", objects, want)
	}
	if got := m.stringOf(t, m.local(t, "probe_suffix")); got != gcslease.ProbeSuffix {
		t.Errorf("local.probe_suffix is %q, want gcslease.ProbeSuffix %q", got, gcslease.ProbeSuffix)
	}
	if prefix := m.source(m.local(t, "object_prefix")); !strings.Contains(prefix, "projects/_/buckets/${var.bucket_name}/objects/${var.prefix}/") {
		t.Errorf("local.object_prefix = %s, want the lease objects' prefix", prefix)
	}
	if v := m.variableDefault(t, "whole_prefix"); !v.RawEquals(cty.False) {
		t.Errorf("var.whole_prefix defaults to %#v, want false: each lease named", v)
	}

	bucket := m.resource(t, "google_storage_bucket", "leases")
	for name, want := range map[string]cty.Value{
		"uniform_bucket_level_access": cty.True,
		"public_access_prevention":    cty.StringVal("enforced"),
		"storage_class":               cty.StringVal("STANDARD"),
	} {
		if got := m.value(t, attr(t, bucket, name)); !got.RawEquals(want) {
			t.Errorf("google_storage_bucket.leases: %s is %#v, want %#v", name, got, want)
		}
	}
	if got := m.value(t, attr(t, oneBlock(t, bucket, "versioning"), "enabled")); !got.RawEquals(cty.False) {
		t.Errorf("google_storage_bucket.leases: versioning is %#v, want off: every renewal would keep a generation", got)
	}
	// Soft delete keeps every overwritten generation, 7 days by default.
	if got := m.value(t, attr(t, oneBlock(t, bucket, "soft_delete_policy"), "retention_duration_seconds")); !got.RawEquals(cty.NumberIntVal(0)) {
		t.Errorf("google_storage_bucket.leases: soft delete retention is %#v, want 0 (off)", got)
	}
}

// secretAttr matches the names of provider attributes that hold secrets:
// account keys, connection strings, SAS tokens, passwords.
var secretAttr = regexp.MustCompile(`(?i)access_key|connection_string|sas|password|secret|private_key`)

func TestOutputsHoldNoUnmarkedSecret(t *testing.T) {
	for _, dir := range slices.Concat(modules, examples) {
		m := load(t, dir)
		for _, out := range m.blocks("output") {
			value := attr(t, out, "value")
			var secrets []string
			for _, tr := range value.Variables() {
				for _, step := range tr {
					if a, ok := step.(hcl.TraverseAttr); ok && secretAttr.MatchString(a.Name) {
						secrets = append(secrets, a.Name)
					}
				}
			}
			if len(secrets) == 0 {
				continue
			}
			if dir == "modules/azure-blob-lease" {
				t.Errorf("%s: output %q holds %v: the Azure module outputs no key or connection string", out.DefRange(), out.Labels[0], secrets)
			}
			if a, ok := out.Body.Attributes["sensitive"]; !ok || !m.value(t, a.Expr).RawEquals(cty.True) {
				t.Errorf("%s: output %q holds %v and is not sensitive = true", out.DefRange(), out.Labels[0], secrets)
			}
		}
	}
}

// urlParams are the query parameters each backend's URLs may carry, by
// scheme.
var urlParams = map[string][]string{
	s3lease.Scheme:     s3lease.URLParams,
	dynamolease.Scheme: dynamolease.URLParams,
	azurelease.Scheme:  azurelease.URLParams,
	gcslease.Scheme:    nil, // gs:// URLs take no parameters
}

func TestLeaseURLsUseTheBackendsSchemes(t *testing.T) {
	for _, c := range []struct{ dir, scheme string }{
		{"modules/aws-s3-lease", s3lease.Scheme},
		{"modules/aws-dynamodb-lease", dynamolease.Scheme},
		{"modules/azure-blob-lease", azurelease.Scheme},
		{"modules/gcp-gcs-lease", gcslease.Scheme},
	} {
		m := load(t, c.dir)
		src := m.source(attr(t, m.output(t, "lease_urls"), "value"))
		if !strings.Contains(src, `"`+c.scheme+"://") {
			t.Errorf("%s: lease_urls = %s, want URLs beginning %s://", c.dir, src, c.scheme)
		}
		for _, q := range regexp.MustCompile(`[?&]([a-z_]+)=`).FindAllStringSubmatch(m.valuesSource(), -1) {
			if params := urlParams[c.scheme]; !slices.Contains(params, q[1]) {
				t.Errorf("%s: a URL carries the parameter %q, which the backend does not accept (it accepts %v)", c.dir, q[1], params)
			}
		}
	}

	// The quorum example's URL, as Terraform computes it: quorum: and
	// three members, each a URL of the backend chosen whose parameters
	// that backend accepts (a member's query string must reach it whole,
	// not run into the next member).
	for _, backend := range []string{s3lease.Scheme, dynamolease.Scheme} {
		lease := quorumExample(t, backend).output(t, "lease_url").AsString()
		for i, mu := range quorumMembers(t, lease) {
			if mu.Scheme != backend {
				t.Errorf("backend %s: lease_url %s: member %d has the scheme %q, want %q", backend, lease, i+1, mu.Scheme, backend)
			}
			for name := range mu.Query() {
				if params, ok := urlParams[mu.Scheme]; !ok || !slices.Contains(params, name) {
					t.Errorf("backend %s: lease_url %s: member %d carries the parameter %q, which %s:// does not accept (it accepts %v)", backend, lease, i+1, name, mu.Scheme, params)
				}
			}
		}
	}
}

// quorumExample evaluates examples/aws-quorum as terraform plan would with
// backend (s3 or dynamodb), in three regions, with the role it creates.
func quorumExample(t *testing.T, backend string) *config {
	t.Helper()
	vars := map[string]cty.Value{
		"backend": cty.StringVal(backend),
		"regions": cty.ListVal([]cty.Value{cty.StringVal("us-east-1"), cty.StringVal("eu-west-1"), cty.StringVal("ap-south-1")}),
	}
	if backend == s3lease.Scheme {
		vars["bucket_prefix"] = cty.StringVal("acme-leases")
	}
	return evaluate(t, load(t, "examples/aws-quorum"), "", vars, func(vars map[string]cty.Value) map[string]cty.Value {
		name := vars["name"].AsString() + "-task"
		role := cty.ObjectVal(map[string]cty.Value{
			"name": cty.StringVal(name),
			"arn":  cty.StringVal("arn:aws:iam::" + testAccount + ":role/" + name),
		})
		return map[string]cty.Value{"aws_iam_role": cty.ObjectVal(map[string]cty.Value{"task": cty.TupleVal([]cty.Value{role})})}
	})
}

// quorumMembers parses a quorum lease URL as lease.Open does
// (quorumlease.MemberURLs, which refuses fewer than three members, an even
// number and one store twice), and each of its members.
func quorumMembers(t *testing.T, lease string) []*url.URL {
	t.Helper()
	u, err := url.Parse(lease)
	if err != nil {
		t.Fatalf("lease_url %s: %v", lease, err)
	}
	members, err := quorumlease.MemberURLs(u)
	if err != nil {
		t.Fatalf("lease_url %s: %v", lease, err)
	}
	var out []*url.URL
	for _, m := range members {
		mu, err := url.Parse(m)
		if err != nil {
			t.Fatalf("lease_url %s: member %s: %v", lease, m, err)
		}
		out = append(out, mu)
	}
	return out
}

// TestQuorumExampleGrantsEveryMemberToOneRole: the quorum example's
// members are three stores of one backend in the three regions, in their
// order, each member's URL naming its store and its store's region; and
// the workers' one role gets aws-lease-iam's policy (whose actions
// TestIAMPolicyGrantsExactlyWhatTheBackendsDeclare checks) for each of the
// three stores, the lease alone in each, and nothing else.
func TestQuorumExampleGrantsEveryMemberToOneRole(t *testing.T) {
	m := load(t, "examples/aws-quorum")
	for _, backend := range []string{s3lease.Scheme, dynamolease.Scheme} {
		c := quorumExample(t, backend)
		lease := c.vars["lease_name"].AsString()
		var regions []string
		for _, r := range c.vars["regions"].AsValueSlice() {
			regions = append(regions, r.AsString())
		}

		// The stores: by region, the instances of the backend's module.
		type store struct{ name, arn, key string }
		stores := map[string]store{}
		for name, cl := range c.calls {
			for _, inst := range cl.modules {
				var s store
				switch filepath.Base(cl.source) {
				case "aws-s3-lease":
					out := inst.outputs()
					s = store{inst.vars["bucket_name"].AsString(), out.GetAttr("bucket_arn").AsString(), out.GetAttr("prefix").AsString() + "/" + lease}
					if backend != s3lease.Scheme {
						t.Errorf("backend %s: module.%s creates a bucket", backend, name)
					}
				case "aws-dynamodb-lease":
					s = store{inst.vars["table_name"].AsString(), inst.outputs().GetAttr("table_arn").AsString(), lease}
					if backend != dynamolease.Scheme {
						t.Errorf("backend %s: module.%s creates a table", backend, name)
					}
				}
				if _, dup := stores[inst.region]; dup {
					t.Errorf("backend %s: two stores in %s", backend, inst.region)
				}
				stores[inst.region] = s
			}
		}
		if got := slices.Sorted(maps.Keys(stores)); !slices.Equal(got, sorted(regions)) {
			t.Errorf("backend %s: stores in the regions %v, want one in each of var.regions %v", backend, got, regions)
		}

		// Member i is the store in regions[i], and says so.
		members := quorumMembers(t, c.output(t, "lease_url").AsString())
		if len(members) != len(regions) {
			t.Fatalf("backend %s: %d members, want one per region %v", backend, len(members), regions)
		}
		for i, mu := range members {
			s := stores[regions[i]]
			if got := mu.Query().Get("region"); got != regions[i] {
				t.Errorf("backend %s: member %d (%s) has region=%q, want its store's region %q", backend, i+1, mu, got, regions[i])
			}
			if mu.Host != s.name || strings.TrimPrefix(mu.Path, "/") != s.key {
				t.Errorf("backend %s: member %d is %s, want the lease %s in %s, the store in %s", backend, i+1, mu, s.key, s.name, regions[i])
			}
		}

		// The grants: aws-lease-iam once per member, the lease alone, to
		// one role.
		iam := m.one(t, "module", "lease_iam")
		if got := m.stringOf(t, attr(t, iam, "source")); got != "../../modules/aws-lease-iam" {
			t.Errorf("module.lease_iam's source is %q, want ../../modules/aws-lease-iam", got)
		}
		leaseNames := map[string]string{s3lease.Scheme: "s3_lease_names", dynamolease.Scheme: "dynamodb_lease_names"}[backend]
		storeArn := map[string]string{s3lease.Scheme: "s3_bucket_arn", dynamolease.Scheme: "dynamodb_table_arn"}[backend]
		role := c.output(t, "role_name").AsString()
		var granted, policies []string
		for key, inst := range c.forEach(t, "lease_iam") {
			in := func(name string) cty.Value {
				if v, ok := inst.inputs[name]; ok {
					return v
				}
				return cty.NullVal(cty.DynamicPseudoType)
			}
			for _, a := range []string{"s3_bucket_arn", "dynamodb_table_arn"} {
				if v := in(a); !v.IsNull() {
					granted = append(granted, v.AsString())
					if a != storeArn {
						t.Errorf("backend %s: module.lease_iam[%q] grants %s %s", backend, key, a, v.AsString())
					}
				}
			}
			if got := show(in(leaseNames)); got != show(cty.TupleVal([]cty.Value{cty.StringVal(lease)})) {
				t.Errorf("backend %s: module.lease_iam[%q].%s = %s, want the lease alone, [%q]", backend, key, leaseNames, got, lease)
			}
			if backend == s3lease.Scheme && show(in("s3_prefix")) != strconv.Quote(strings.TrimSuffix(stores[regions[0]].key, "/"+lease)) {
				t.Errorf("backend %s: module.lease_iam[%q].s3_prefix = %s, want the buckets' prefix", backend, key, show(in("s3_prefix")))
			}
			// More than the lease: a prefix, shard groups, another table.
			for _, a := range []string{"s3_whole_prefix", "s3_shard_groups", "dynamodb_shard_table_arn", "dynamodb_shard_groups", "s3_kms_key_arn"} {
				if v := in(a); !v.IsNull() && !v.RawEquals(cty.False) && !(v.CanIterateElements() && v.LengthInt() == 0) {
					t.Errorf("backend %s: module.lease_iam[%q] sets %s = %s: the workers need the lease alone", backend, key, a, show(v))
				}
			}
			if got := show(in("role_name")); got != strconv.Quote(role) {
				t.Errorf("backend %s: module.lease_iam[%q] attaches to %s, want the workers' role %q", backend, key, got, role)
			}
			policies = append(policies, in("name").AsString())
		}
		var arns []string
		for _, s := range stores {
			arns = append(arns, s.arn)
		}
		if !slices.Equal(sorted(granted), sorted(arns)) {
			t.Errorf("backend %s: the role's policies grant %v, want each member's store once, %v", backend, sorted(granted), sorted(arns))
		}
		if len(dedup(policies)) != len(policies) {
			t.Errorf("backend %s: the policies' names %v repeat", backend, policies)
		}
	}

	// Nothing else grants the role anything: no other policy, and the
	// example's policy documents only let ECS tasks assume it.
	for _, typ := range []string{"aws_iam_policy", "aws_iam_role_policy", "aws_iam_role_policy_attachment", "aws_iam_role_policies_exclusive", "aws_iam_role_policy_attachments_exclusive", "aws_iam_policy_attachment"} {
		if b := m.blocks("resource", typ); len(b) > 0 {
			t.Errorf("%s: a %s: the workers' role gets module.lease_iam's policies and nothing else", b[0].DefRange(), typ)
		}
	}
	for _, r := range m.blocks("resource", "aws_iam_role") {
		for _, a := range []string{"inline_policy", "managed_policy_arns"} {
			if r.Body.Attributes[a] != nil || len(blocksOf(r.Body, a)) > 0 {
				t.Errorf("%s: aws_iam_role.%s has %s: the workers' role gets module.lease_iam's policies and nothing else", r.DefRange(), r.Labels[1], a)
			}
		}
	}
	for _, doc := range m.blocks("data", "aws_iam_policy_document") {
		for _, s := range m.statements(t, doc) {
			if s.effect == "Allow" && !slices.Equal(s.actions, []string{"sts:AssumeRole"}) {
				t.Errorf("%s: statement %q allows %v: the example's own policy documents may only let the workers assume their role", s.pos, s.sid, s.actions)
			}
		}
	}
}

func TestModulesAreDocumentedTypedAndPinned(t *testing.T) {
	for _, dir := range slices.Concat(modules, examples) {
		t.Run(dir, func(t *testing.T) {
			for _, f := range []string{"main.tf", "variables.tf", "outputs.tf", "versions.tf", "README.md"} {
				if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
					t.Errorf("missing %s", f)
				}
			}
			m := load(t, dir)
			readme, _ := os.ReadFile(filepath.Join(dir, "README.md"))
			for _, v := range m.blocks("variable") {
				name := v.Labels[0]
				for _, a := range []string{"type", "description"} {
					if _, ok := v.Body.Attributes[a]; !ok {
						t.Errorf("%s: variable %q has no %s", v.DefRange(), name, a)
					}
				}
				if !strings.Contains(string(readme), "`"+name+"`") {
					t.Errorf("README.md does not describe variable `%s`", name)
				}
			}
			for _, o := range m.blocks("output") {
				if !strings.Contains(string(readme), "`"+o.Labels[0]+"`") {
					t.Errorf("README.md does not describe output `%s`", o.Labels[0])
				}
			}
			tf := m.blocks("terraform")
			if len(tf) != 1 {
				t.Fatalf("%d terraform blocks, want 1", len(tf))
			}
			if got := m.stringOf(t, attr(t, tf[0], "required_version")); !regexp.MustCompile(`^~> 1\.\d+$`).MatchString(got) {
				t.Errorf("required_version is %q, want ~> 1.N (Terraform 1 only)", got)
			}
			for _, rp := range blocksOf(tf[0].Body, "required_providers") {
				for name, a := range rp.Body.Attributes {
					v := m.value(t, a.Expr)
					if !v.Type().IsObjectType() || !v.Type().HasAttribute("version") {
						t.Errorf("provider %s has no version constraint", name)
						continue
					}
					if got := v.GetAttr("version").AsString(); !regexp.MustCompile(`^~> \d+\.0$`).MatchString(got) {
						t.Errorf("provider %s is pinned to %q, want a major version (~> N.0)", name, got)
					}
				}
			}
		})
	}
}

// ---- reading HCL ----------------------------------------------------------------

// mod is one Terraform module (or example): its .tf files, parsed.
type mod struct {
	dir    string
	files  map[string][]byte // source, by file name
	bodies []*hclsyntax.Body
}

func load(t *testing.T, dir string) *mod {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*.tf"))
	if err != nil || len(names) == 0 {
		t.Fatalf("no .tf files in %s (%v)", dir, err)
	}
	p := hclparse.NewParser()
	m := &mod{dir: dir, files: map[string][]byte{}}
	for _, name := range names {
		f, diags := p.ParseHCLFile(name)
		if diags.HasErrors() {
			t.Fatalf("parsing %s: %s", name, diags.Error())
		}
		m.files[name] = f.Bytes
		m.bodies = append(m.bodies, f.Body.(*hclsyntax.Body))
	}
	return m
}

// blocks returns the module's top-level blocks of a type whose first labels
// are labels.
func (m *mod) blocks(typ string, labels ...string) []*hclsyntax.Block {
	var out []*hclsyntax.Block
	for _, b := range m.bodies {
		for _, blk := range b.Blocks {
			if blk.Type == typ && len(blk.Labels) >= len(labels) && slices.Equal(blk.Labels[:len(labels)], labels) {
				out = append(out, blk)
			}
		}
	}
	return out
}

func (m *mod) one(t *testing.T, typ string, labels ...string) *hclsyntax.Block {
	t.Helper()
	bs := m.blocks(typ, labels...)
	if len(bs) != 1 {
		t.Fatalf("%s: %d blocks %s %q, want 1", m.dir, len(bs), typ, labels)
	}
	return bs[0]
}

func (m *mod) resource(t *testing.T, typ, name string) *hclsyntax.Block {
	t.Helper()
	return m.one(t, "resource", typ, name)
}

func (m *mod) data(t *testing.T, typ, name string) *hclsyntax.Block {
	t.Helper()
	return m.one(t, "data", typ, name)
}

func (m *mod) output(t *testing.T, name string) *hclsyntax.Block {
	t.Helper()
	return m.one(t, "output", name)
}

func (m *mod) local(t *testing.T, name string) hclsyntax.Expression {
	t.Helper()
	for _, b := range m.blocks("locals") {
		if a, ok := b.Body.Attributes[name]; ok {
			return a.Expr
		}
	}
	t.Fatalf("%s: no local.%s", m.dir, name)
	return nil
}

func (m *mod) variableDefault(t *testing.T, name string) cty.Value {
	t.Helper()
	v := m.one(t, "variable", name)
	a, ok := v.Body.Attributes["default"]
	if !ok {
		t.Fatalf("%s: variable %q has no default", m.dir, name)
	}
	return m.value(t, a.Expr)
}

// value evaluates an expression statically. A reference to a variable is
// replaced by the variable's default: the value a user gets unless they
// choose otherwise.
func (m *mod) value(t *testing.T, e hclsyntax.Expression) cty.Value {
	t.Helper()
	if tr, diags := hcl.AbsTraversalForExpr(e); !diags.HasErrors() && len(tr) == 2 && tr.RootName() == "var" {
		return m.variableDefault(t, tr[1].(hcl.TraverseAttr).Name)
	}
	v, diags := e.Value(nil)
	if diags.HasErrors() {
		t.Fatalf("%s: %s is not a constant or a variable's default: %s", e.Range(), m.source(e), diags.Error())
	}
	return v
}

func (m *mod) stringOf(t *testing.T, e hclsyntax.Expression) string {
	t.Helper()
	v := m.value(t, e)
	if v.IsNull() || !v.Type().Equals(cty.String) {
		t.Fatalf("%s: %s is %#v, want a string", e.Range(), m.source(e), v)
	}
	return v.AsString()
}

// source is an expression's text as written.
func (m *mod) source(e hclsyntax.Expression) string {
	r := e.Range()
	return string(r.SliceBytes(m.files[r.Filename]))
}

// valuesSource is the text of the module's locals and output values (not
// their descriptions).
func (m *mod) valuesSource() string {
	var b strings.Builder
	for _, l := range m.blocks("locals") {
		for _, a := range l.Body.Attributes {
			b.WriteString(m.source(a.Expr) + "\n")
		}
	}
	for _, o := range m.blocks("output") {
		if a, ok := o.Body.Attributes["value"]; ok {
			b.WriteString(m.source(a.Expr) + "\n")
		}
	}
	return b.String()
}

func attr(t *testing.T, b *hclsyntax.Block, name string) hclsyntax.Expression {
	t.Helper()
	a, ok := b.Body.Attributes[name]
	if !ok {
		t.Fatalf("%s: %s %q has no %s", b.DefRange(), b.Type, b.Labels, name)
	}
	return a.Expr
}

// blocksOf returns the nested blocks of a type, static or dynamic ("dynamic
// TYPE" blocks stand for their content blocks).
func blocksOf(body *hclsyntax.Body, typ string) []*hclsyntax.Block {
	var out []*hclsyntax.Block
	for _, b := range body.Blocks {
		switch {
		case b.Type == typ:
			out = append(out, b)
		case b.Type == "dynamic" && len(b.Labels) == 1 && b.Labels[0] == typ:
			for _, c := range b.Body.Blocks {
				if c.Type == "content" {
					out = append(out, c)
				}
			}
		}
	}
	return out
}

func oneBlock(t *testing.T, b *hclsyntax.Block, typ string) *hclsyntax.Block {
	t.Helper()
	bs := blocksOf(b.Body, typ)
	if len(bs) != 1 {
		t.Fatalf("%s: %d %s blocks, want 1", b.DefRange(), len(bs), typ)
	}
	return bs[0]
}

// statement is one statement of an aws_iam_policy_document.
type statement struct {
	pos             hcl.Range
	sid, effect     string
	actions         []string
	resources       string            // the expression, as written
	principals      string            // the identifiers, as written
	forEach         string            // of its dynamic block, if any
	conditionKeys   []string          // the condition variables
	conditionValues map[string]string // their values, as written
}

func (m *mod) statements(t *testing.T, doc *hclsyntax.Block) []statement {
	t.Helper()
	var out []statement
	for _, b := range doc.Body.Blocks {
		var body *hclsyntax.Body
		s := statement{pos: b.DefRange(), effect: "Allow", conditionValues: map[string]string{}}
		switch {
		case b.Type == "statement":
			body = b.Body
		case b.Type == "dynamic" && len(b.Labels) == 1 && b.Labels[0] == "statement":
			body = oneBlock(t, b, "content").Body
			s.forEach = m.source(attr(t, b, "for_each"))
		default:
			continue
		}
		if a, ok := body.Attributes["sid"]; ok {
			s.sid = m.stringOf(t, a.Expr)
		}
		if a, ok := body.Attributes["effect"]; ok {
			s.effect = m.stringOf(t, a.Expr)
		}
		a, ok := body.Attributes["actions"]
		if !ok {
			t.Fatalf("%s: statement %q has no actions (not_actions is not allowed)", s.pos, s.sid)
		}
		actions := m.value(t, a.Expr)
		for it := actions.ElementIterator(); it.Next(); {
			_, v := it.Element()
			s.actions = append(s.actions, v.AsString())
		}
		if a, ok := body.Attributes["resources"]; ok {
			s.resources = m.source(a.Expr)
		}
		if _, ok := body.Attributes["not_resources"]; ok {
			t.Errorf("%s: statement %q uses not_resources", s.pos, s.sid)
		}
		for _, p := range blocksOf(body, "principals") {
			s.principals += m.source(attr(t, p, "identifiers"))
		}
		for _, c := range blocksOf(body, "condition") {
			key := m.stringOf(t, attr(t, c, "variable"))
			s.conditionKeys = append(s.conditionKeys, key)
			s.conditionValues[key] = m.source(attr(t, c, "values"))
		}
		out = append(out, s)
	}
	return out
}

func find(stmts []statement, sid string) *statement {
	for i := range stmts {
		if stmts[i].sid == sid {
			return &stmts[i]
		}
	}
	return nil
}

// grantOn returns the actions a backend's Store grants on resource.
func grantOn(t *testing.T, s driver.Store, resource string) []string {
	t.Helper()
	for _, g := range s.Grants {
		if g.Resource == resource {
			return g.Actions
		}
	}
	t.Fatalf("%s declares no grant on %s (its grants: %v)", s.Scheme, resource, s.Grants)
	return nil
}

// groupGrantOn returns the actions a backend's Store grants shard groups
// (driver.Grant.Group) on resource.
func groupGrantOn(t *testing.T, s driver.Store, resource string) []string {
	t.Helper()
	return grantFor(t, s, resource, true).Actions
}

// grantFor returns a backend's grant on resource for shard groups
// (driver.Grant.Group) or, without group, for a lease.
func grantFor(t *testing.T, s driver.Store, resource string, group bool) driver.Grant {
	t.Helper()
	for _, g := range s.Grants {
		if g.Group == group && g.Resource == resource {
			return g
		}
	}
	t.Fatalf("%s declares no grant on %s (shard groups: %t; its grants: %v)", s.Scheme, resource, group, s.Grants)
	return driver.Grant{}
}

// leaseGranted returns every action a backend's Store grants a lease, not
// only a shard group (driver.Grant.Group), once each.
func leaseGranted(s driver.Store) []string {
	var all []string
	for _, g := range s.Grants {
		if !g.Group {
			all = append(all, g.Actions...)
		}
	}
	return dedup(all)
}

// allGranted returns every action a backend's Store grants, once each.
func allGranted(s driver.Store) []string {
	var all []string
	for _, g := range s.Grants {
		all = append(all, g.Actions...)
	}
	return dedup(all)
}

// strings evaluates a list of strings.
func (m *mod) strings(t *testing.T, e hclsyntax.Expression) []string {
	t.Helper()
	var out []string
	for _, v := range m.value(t, e).AsValueSlice() {
		out = append(out, v.AsString())
	}
	return out
}

// dedup returns the distinct elements of s, sorted.
func dedup(s []string) []string {
	return slices.Compact(sorted(s))
}

func sorted(s []string) []string {
	return slices.Sorted(slices.Values(s))
}

// squeeze removes the spaces from an expression's text, for comparisons
// that do not care how it is laid out.
func squeeze(s string) string {
	return strings.Join(strings.Fields(s), "")
}

// TestECSExampleGrantsTheLeaseOrTheGroupOnly: the ECS example's task role
// gets the lease alone when it runs one leader, and the shard group alone
// (its objects, its listing; on DynamoDB the shard table, not the lease
// table) when it runs shard workers, on either backend.
func TestECSExampleGrantsTheLeaseOrTheGroupOnly(t *testing.T) {
	m := load(t, "examples/aws-ecs")
	iam := m.one(t, "module", "lease_iam")
	const (
		bucket     = "arn:aws:s3:::b"
		table      = "arn:aws:dynamodb:eu-west-1:123456789012:table/demo-leases"
		shardTable = "arn:aws:dynamodb:eu-west-1:123456789012:table/demo-shards"
	)
	name := cty.StringVal("worker")
	none := cty.ListValEmpty(cty.String)
	for _, backend := range []string{"s3", "dynamodb"} {
		for _, sharded := range []bool{false, true} {
			ctx := &hcl.EvalContext{Variables: map[string]cty.Value{
				"var":   cty.ObjectVal(map[string]cty.Value{"backend": cty.StringVal(backend), "lease_name": name}),
				"local": cty.ObjectVal(map[string]cty.Value{"sharded": cty.BoolVal(sharded), "s3_prefix": cty.StringVal("leases")}),
				"module": cty.ObjectVal(map[string]cty.Value{
					"s3_lease":       cty.TupleVal([]cty.Value{cty.ObjectVal(map[string]cty.Value{"bucket_arn": cty.StringVal(bucket)})}),
					"dynamodb_lease": cty.TupleVal([]cty.Value{cty.ObjectVal(map[string]cty.Value{"table_arn": cty.StringVal(table), "shard_table_arn": cty.StringVal(shardTable)})}),
				}),
				"aws_iam_role": cty.ObjectVal(map[string]cty.Value{"task": cty.ObjectVal(map[string]cty.Value{"name": cty.StringVal("demo-task")})}),
			}}
			str := func(s string) cty.Value { return cty.StringVal(s) }
			null := cty.NullVal(cty.String)
			pick := func(cond bool, v cty.Value) cty.Value {
				if cond {
					return v
				}
				return null
			}
			lease, group := cty.TupleVal([]cty.Value{name}), none
			if sharded {
				lease, group = none, cty.TupleVal([]cty.Value{name})
			}
			want := map[string]cty.Value{
				"s3_bucket_arn":            pick(backend == "s3", str(bucket)),
				"s3_lease_names":           lease,
				"s3_shard_groups":          group,
				"dynamodb_table_arn":       pick(backend == "dynamodb" && !sharded, str(table)),
				"dynamodb_lease_names":     lease,
				"dynamodb_shard_table_arn": pick(backend == "dynamodb" && sharded, str(shardTable)),
				"dynamodb_shard_groups":    group,
			}
			for a, w := range want {
				v, diags := attr(t, iam, a).Value(ctx)
				if diags.HasErrors() {
					t.Fatalf("module.lease_iam.%s: %s", a, diags.Error())
				}
				if got, want := show(v), show(w); got != want {
					t.Errorf("backend %s, sharded %t: module.lease_iam.%s = %s, want %s", backend, sharded, a, got, want)
				}
			}
		}
	}
}

// show is a string, a list of strings, another value or null as text: two
// lists with the same strings show the same whatever their cty types (a
// tuple, an empty list).
func show(v cty.Value) string {
	switch {
	case v.IsNull():
		return "null"
	case v.Type().Equals(cty.String):
		return strconv.Quote(v.AsString())
	case !v.CanIterateElements():
		return v.GoString()
	}
	var items []string
	for it := v.ElementIterator(); it.Next(); {
		_, e := it.Element()
		items = append(items, show(e))
	}
	return "[" + strings.Join(items, ", ") + "]"
}

// TestPreferGrantsTheCandidatesKeys: with prefer = true, aws-lease-iam and
// gcp-gcs-lease grant, beside each lease they name, the key leasehold run
// --prefer and leasehold handoff open beside it (runner.CandidatesSuffix),
// with its probe; without, the lease alone.
func TestPreferGrantsTheCandidatesKeys(t *testing.T) {
	strs := func(ss ...string) cty.Value {
		if len(ss) == 0 {
			return cty.ListValEmpty(cty.String)
		}
		var vs []cty.Value
		for _, s := range ss {
			vs = append(vs, cty.StringVal(s))
		}
		return cty.TupleVal(vs)
	}
	cand := runner.CandidatesSuffix
	for _, prefer := range []bool{false, true} {
		names := []string{"job"}
		if prefer {
			names = append(names, "job"+cand)
		}
		var keys, probes, objects []string
		for _, n := range names {
			keys = append(keys, "leases/"+n)
			probes = append(probes, "leases/"+n+s3lease.ProbeSuffix)
			objects = append(objects, "projects/_/buckets/b/objects/leases/"+n, "projects/_/buckets/b/objects/leases/"+n+gcslease.ProbeSuffix)
		}

		iam := evaluate(t, load(t, "modules/aws-lease-iam"), "eu-west-1", map[string]cty.Value{
			"name":                 cty.StringVal("p"),
			"s3_bucket_arn":        cty.StringVal("arn:aws:s3:::b"),
			"s3_lease_names":       strs("job"),
			"dynamodb_table_arn":   cty.StringVal("arn:aws:dynamodb:eu-west-1:123456789012:table/t"),
			"dynamodb_lease_names": strs("job"),
			"prefer":               cty.BoolVal(prefer),
		}, nil)
		var probeItems []string
		for _, n := range names {
			probeItems = append(probeItems, n+s3lease.ProbeSuffix)
		}
		for local, want := range map[string]cty.Value{
			"s3_lease_keys":        strs(keys...),
			"s3_probe_keys":        strs(probes...),
			"dynamodb_names":       strs(names...),
			"dynamodb_probe_names": strs(probeItems...),
		} {
			if got := show(iam.locals[local]); got != show(want) {
				t.Errorf("aws-lease-iam, prefer %t: local.%s = %s, want %s", prefer, local, got, show(want))
			}
		}

		gcs := evaluate(t, load(t, "modules/gcp-gcs-lease"), "", map[string]cty.Value{
			"project_id":            cty.StringVal("p"),
			"bucket_name":           cty.StringVal("b"),
			"service_account_email": cty.StringVal("w@p.iam.gserviceaccount.com"),
			"lease_names":           strs("job"),
			"prefer":                cty.BoolVal(prefer),
		}, func(vars map[string]cty.Value) map[string]cty.Value {
			return map[string]cty.Value{"google_storage_bucket": cty.ObjectVal(map[string]cty.Value{
				"leases": cty.TupleVal([]cty.Value{cty.ObjectVal(map[string]cty.Value{"name": vars["bucket_name"]})}),
			})}
		})
		if got, want := show(gcs.locals["lease_objects"]), show(strs(objects...)); got != want {
			t.Errorf("gcp-gcs-lease, prefer %t: local.lease_objects = %s, want %s", prefer, got, want)
		}
	}
	for _, dir := range []string{"modules/aws-lease-iam", "modules/gcp-gcs-lease"} {
		m := load(t, dir)
		if got := m.stringOf(t, m.local(t, "candidates_suffix")); got != cand {
			t.Errorf("%s: local.candidates_suffix is %q, want runner.CandidatesSuffix %q", dir, got, cand)
		}
		if v := m.variableDefault(t, "prefer"); !v.RawEquals(cty.False) {
			t.Errorf("%s: var.prefer defaults to %#v, want false", dir, v)
		}
	}
}
