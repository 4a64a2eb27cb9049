# tflint configuration for terraform/ (scripts/test runs it on every module
# and example). Only the ruleset bundled with tflint is used, so it runs
# offline: no plugin source or version here, and no `tflint --init`.
config {
  # Local module calls (the examples' ../../modules/...) are evaluated;
  # nothing is downloaded.
  call_module_type = "local"
}

plugin "terraform" {
  enabled = true
  preset  = "all"
}
