//go:build unix

package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"
	"go.yaml.in/yaml/v3"
)

// TestKubernetesCronJob: the CronJob example's leasehold command line
// parses with leasehold run's own flags, runs once per period, starts no
// later than its rounding tolerates, and does not retry the exits that a
// retry would not change.
func TestKubernetesCronJob(t *testing.T) {
	b, err := os.ReadFile("../../deploy/kubernetes/cronjob.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cj struct {
		Spec struct {
			StartingDeadlineSeconds int `yaml:"startingDeadlineSeconds"`
			JobTemplate             struct {
				Spec struct {
					PodFailurePolicy struct {
						Rules []struct {
							Action      string `yaml:"action"`
							OnExitCodes struct {
								Values []int `yaml:"values"`
							} `yaml:"onExitCodes"`
						} `yaml:"rules"`
					} `yaml:"podFailurePolicy"`
					Template struct {
						Spec struct {
							Containers []struct {
								Command []string `yaml:"command"`
								Args    []string `yaml:"args"`
							} `yaml:"containers"`
						} `yaml:"spec"`
					} `yaml:"template"`
				} `yaml:"spec"`
			} `yaml:"jobTemplate"`
		} `yaml:"spec"`
	}
	if err := yaml.Unmarshal(b, &cj); err != nil {
		t.Fatal(err)
	}
	job := cj.Spec.JobTemplate.Spec
	if len(job.Template.Spec.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(job.Template.Spec.Containers))
	}
	c := job.Template.Spec.Containers[0]
	if !slices.Equal(c.Command, []string{"/leasehold"}) || len(c.Args) == 0 || c.Args[0] != "run" {
		t.Fatalf("command %q args %q, want /leasehold run ...", c.Command, c.Args)
	}
	env, _, _ := testEnv(map[string]string{"LEASEHOLD_IDENTITY": "hourly-report-29012345-abcde"})
	o, err := parseRun(c.Args[1:], env)
	if err != nil {
		t.Fatalf("leasehold %q: %v", c.Args, err)
	}
	if !o.once || o.every == 0 || o.period == "" {
		t.Errorf("leasehold %q: once %t, every %v; want --once with --every", c.Args, o.once, o.every)
	}
	if deadline := time.Duration(cj.Spec.StartingDeadlineSeconds) * time.Second; deadline <= 0 || deadline >= o.every/2 {
		t.Errorf("startingDeadlineSeconds %v, want positive and under half of --every %v: a pod started later rounds to the next tick", deadline, o.every)
	}
	var noRetry []int
	for _, r := range job.PodFailurePolicy.Rules {
		if r.Action == "FailJob" {
			noRetry = append(noRetry, r.OnExitCodes.Values...)
		}
	}
	for _, code := range []int{exitAlreadyRan, exitNotElected, exitConfig} {
		if !slices.Contains(noRetry, code) {
			t.Errorf("podFailurePolicy retries exit %d (FailJob for %v)", code, noRetry)
		}
	}
}

// TestKubernetesShards: the shard workers' Deployment runs leasehold run
// --shards with leasehold's own flags, takes each pod's identity from its
// name, gives a scaled-in pod time to stop its commands (--grace) and
// release its shards before the kubelet's SIGKILL, and its autoscaler
// scales that Deployment within 1 to --shards pods.
func TestKubernetesShards(t *testing.T) {
	b, err := os.ReadFile("../../deploy/kubernetes/shards.yaml")
	if err != nil {
		t.Fatal(err)
	}
	type envVar struct {
		Name      string `yaml:"name"`
		ValueFrom struct {
			FieldRef struct {
				FieldPath string `yaml:"fieldPath"`
			} `yaml:"fieldRef"`
		} `yaml:"valueFrom"`
	}
	var doc struct {
		Kind     string `yaml:"kind"`
		Metadata struct {
			Name string `yaml:"name"`
		} `yaml:"metadata"`
		Spec struct {
			Template struct {
				Spec struct {
					TerminationGracePeriodSeconds int `yaml:"terminationGracePeriodSeconds"`
					Containers                    []struct {
						Command []string `yaml:"command"`
						Args    []string `yaml:"args"`
						Env     []envVar `yaml:"env"`
					} `yaml:"containers"`
				} `yaml:"spec"`
			} `yaml:"template"`
			ScaleTargetRef struct {
				Kind string `yaml:"kind"`
				Name string `yaml:"name"`
			} `yaml:"scaleTargetRef"`
			MinReplicas int `yaml:"minReplicas"`
			MaxReplicas int `yaml:"maxReplicas"`
		} `yaml:"spec"`
	}
	var kinds []string
	var deploy, hpa = doc, doc
	dec := yaml.NewDecoder(bytes.NewReader(b))
	for {
		d := doc
		if err := dec.Decode(&d); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		kinds = append(kinds, d.Kind)
		switch d.Kind {
		case "Deployment":
			deploy = d
		case "HorizontalPodAutoscaler":
			hpa = d
		}
	}
	if !slices.Equal(kinds, []string{"Deployment", "HorizontalPodAutoscaler"}) {
		t.Fatalf("documents of kinds %q; want a Deployment and a HorizontalPodAutoscaler", kinds)
	}
	pod := deploy.Spec.Template.Spec
	if len(pod.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(pod.Containers))
	}
	c := pod.Containers[0]
	if !slices.Equal(c.Command, []string{"/leasehold"}) || len(c.Args) == 0 || c.Args[0] != "run" {
		t.Fatalf("command %q args %q, want /leasehold run ...", c.Command, c.Args)
	}
	env, _, _ := testEnv(map[string]string{"LEASEHOLD_IDENTITY": "orders-7c9d8f6b5-x2x4q"})
	o, err := parseRun(c.Args[1:], env)
	if err != nil {
		t.Fatalf("leasehold %q: %v", c.Args, err)
	}
	if o.shards == 0 {
		t.Fatalf("leasehold %q: no --shards", c.Args)
	}
	if !slices.ContainsFunc(c.Env, func(e envVar) bool {
		return e.Name == "LEASEHOLD_IDENTITY" && e.ValueFrom.FieldRef.FieldPath == "metadata.name"
	}) {
		t.Errorf("env %+v: want LEASEHOLD_IDENTITY from the pod's name (fieldRef metadata.name)", c.Env)
	}
	// The drain: --grace for the commands, then a release call.
	opts, err := o.leaseOptions().Validate()
	if err != nil {
		t.Fatal(err)
	}
	if grace := time.Duration(pod.TerminationGracePeriodSeconds) * time.Second; grace <= o.grace+opts.CallTimeout {
		t.Errorf("terminationGracePeriodSeconds %v, want more than --grace %v plus a release call (%v)", grace, o.grace, opts.CallTimeout)
	}
	if ref := hpa.Spec.ScaleTargetRef; ref.Kind != "Deployment" || ref.Name != deploy.Metadata.Name {
		t.Errorf("the autoscaler scales %s %q, want Deployment %q", ref.Kind, ref.Name, deploy.Metadata.Name)
	}
	if hpa.Spec.MinReplicas < 1 || hpa.Spec.MaxReplicas > o.shards || hpa.Spec.MinReplicas > hpa.Spec.MaxReplicas {
		t.Errorf("replicas %d to %d, want within 1 to --shards %d: a pod beyond N owns nothing", hpa.Spec.MinReplicas, hpa.Spec.MaxReplicas, o.shards)
	}
}

// TestECSShardsCommandLine: the ECS example's entry point with shards set
// parses with leasehold run's own flags as a shard worker of that many
// shards, and its default stop_timeout leaves a task scaled in the time to
// stop its commands (--grace) and release its shards.
func TestECSShardsCommandLine(t *testing.T) {
	dir := "../../terraform/examples/aws-ecs"
	p := hclparse.NewParser()
	var entry, stop hcl.Expression
	for _, name := range []string{"main.tf", "variables.tf"} {
		f, diags := p.ParseHCLFile(filepath.Join(dir, name))
		if diags.HasErrors() {
			t.Fatal(diags.Error())
		}
		for _, b := range f.Body.(*hclsyntax.Body).Blocks {
			switch {
			case b.Type == "locals" && b.Body.Attributes["entry_point"] != nil:
				entry = b.Body.Attributes["entry_point"].Expr
			case b.Type == "variable" && b.Labels[0] == "stop_timeout":
				stop = b.Body.Attributes["default"].Expr
			}
		}
	}
	if entry == nil || stop == nil {
		t.Fatalf("%s: no local.entry_point or no default stop_timeout", dir)
	}
	ctx := &hcl.EvalContext{
		Variables: map[string]cty.Value{
			"local": cty.ObjectVal(map[string]cty.Value{"scheduled": cty.False, "sharded": cty.True}),
			"var":   cty.ObjectVal(map[string]cty.Value{"shards": cty.NumberIntVal(16)}),
		},
		Functions: map[string]function.Function{"tostring": stdlib.MakeToFunc(cty.String)},
	}
	v, diags := entry.Value(ctx)
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	var args []string
	for it := v.ElementIterator(); it.Next(); {
		_, e := it.Element()
		args = append(args, e.AsString())
	}
	if len(args) < 2 || args[0] != "/leasehold" || args[1] != "run" {
		t.Fatalf("entry point %q, want /leasehold run ...", args)
	}
	env, _, _ := testEnv(map[string]string{"LEASEHOLD_LEASE": "s3://b/leases/worker", "LEASEHOLD_IDENTITY": "ip-10-0-1-7"})
	o, err := parseRun(append(args[2:], "--", "/app/worker"), env)
	if err != nil {
		t.Fatalf("leasehold %q: %v", args, err)
	}
	if o.shards != 16 {
		t.Errorf("leasehold %q: --shards %d, want 16", args, o.shards)
	}
	sv, diags := stop.Value(nil)
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	opts, err := o.leaseOptions().Validate()
	if err != nil {
		t.Fatal(err)
	}
	secs, _ := sv.AsBigFloat().Int64()
	if d := time.Duration(secs) * time.Second; d <= o.grace+opts.CallTimeout {
		t.Errorf("stop_timeout %v, want more than --grace %v plus a release call (%v)", d, o.grace, opts.CallTimeout)
	}
}
