package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/leasehold/leasehold/lease"
)

// TestScenarios plays the demo in fake time and checks that its timeline
// shows each scenario's outcome.
func TestScenarios(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var out bytes.Buffer
		if err := runScenarios(context.Background(), &out); err != nil {
			t.Fatalf("runScenarios: %v\n%s", err, out.String())
		}
		for _, want := range []string{
			"elected      fencing token 1",
			"CRASHED", "fencing token 2", "took over",
			"demoted      stopped (released: true)", "fencing token 3",
			"STALLED", "demoted      unhealthy (released: true)", "fencing token 4",
			"most leaders at any instant: 1",
		} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("timeline lacks %q:\n%s", want, out.String())
			}
		}
	})
}

func TestContendRejectsUnknownScheme(t *testing.T) {
	err := contend(context.Background(), &bytes.Buffer{}, "nope://x", lease.Options{Identity: "a"})
	if err == nil || !strings.Contains(err.Error(), `unknown scheme "nope"`) || !strings.Contains(err.Error(), "mem") {
		t.Fatalf("contend with an unknown scheme: %v, want an error listing the registered schemes", err)
	}
}
