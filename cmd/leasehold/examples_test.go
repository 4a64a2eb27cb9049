//go:build unix

package main

import (
	"os"
	"slices"
	"testing"
	"time"

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
