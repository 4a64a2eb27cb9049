package main

import (
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestSignalsLeftAsFoundForTheCommand: leasehold catches SIGPIPE rather
// than ignoring it, so that the command does not inherit an ignored
// SIGPIPE across exec (a command's own "producer | head" would go on
// writing into EPIPE); and it leaves a SIGHUP ignored at its start
// (nohup) ignored, in itself and so in the command, instead of stopping on
// it as it does on a SIGHUP it was not started to ignore.
func TestSignalsLeftAsFoundForTheCommand(t *testing.T) {
	bin := filepath.Join(buildBinaries(t), "leasehold")
	for _, tc := range []struct {
		name   string
		nohup  bool
		hupIgn bool
	}{
		{name: "plain"},
		{name: "nohup", nohup: true, hupIgn: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prefix := ""
			if tc.nohup {
				prefix = `trap "" HUP; `
			}
			cmd := exec.Command("sh", "-c", prefix+`exec "$0" "$@"`, bin,
				"run", "--once", "--lease", "mem://signals", "--identity", "s", "--ttl", "2s", "--",
				"grep", "SigIgn", "/proc/self/status")
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("leasehold run: %v\n%s", err, out)
			}
			field := strings.Fields(string(out))
			if len(field) != 2 {
				t.Fatalf("the command printed %q, want its SigIgn line", out)
			}
			ign, err := strconv.ParseUint(field[1], 16, 64)
			if err != nil {
				t.Fatal(err)
			}
			const hup, pipe = 1 << (1 - 1), 1 << (13 - 1)
			if ign&pipe != 0 {
				t.Errorf("the command runs with SIGPIPE ignored (SigIgn %s): leasehold's own handling of SIGPIPE leaked into it", field[1])
			}
			if got := ign&hup != 0; got != tc.hupIgn {
				t.Errorf("the command runs with SIGHUP ignored: %v, want %v (SigIgn %s)", got, tc.hupIgn, field[1])
			}
		})
	}
}
