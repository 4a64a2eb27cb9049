//go:build unix

package main

import (
	"strings"
	"testing"
)

func TestEnvName(t *testing.T) {
	for flag, want := range map[string]string{
		"lease": "LEASEHOLD_LEASE", "health-url": "LEASEHOLD_HEALTH_URL", "progress-on-stdout": "LEASEHOLD_PROGRESS_ON_STDOUT",
	} {
		if got := envName(flag); got != want {
			t.Errorf("envName(%q) = %q, want %q", flag, got, want)
		}
	}
}

// TestEmptyValueIsRefused: every flag of every command refuses an empty
// value, given on the command line or by its variable set but empty,
// naming the flag and its variable: read as "not given", a script's unset
// variable (--period "$TICK") silently meant the flag's default, for
// --period no period at all. (Only string flags take an empty value on the
// command line; the others' parsers refuse it.)
func TestEmptyValueIsRefused(t *testing.T) {
	commands := map[string]func() *flagSet{
		"run":    func() *flagSet { return runFlags(&runOptions{}) },
		"status": func() *flagSet { return statusFlags(&statusOptions{}) },
		"break":  func() *flagSet { return breakFlags(&breakOptions{}) },
		"check":  func() *flagSet { return checkFlags(&checkOptions{}) },
	}
	unset := func(string) (string, bool) { return "", false }
	for cmd, flags := range commands {
		for _, g := range flags().groups {
			for _, name := range g.names {
				want := []string{"must not be empty", "--" + name, envName(name)}
				check := func(t *testing.T, err error) {
					t.Helper()
					for _, w := range want {
						if err == nil || !strings.Contains(err.Error(), w) {
							t.Fatalf("%v; want an error saying %q", err, strings.Join(want, `", "`))
						}
					}
				}
				t.Run(cmd+"/"+envName(name)+"=", func(t *testing.T) {
					_, err := flags().parse(nil, func(k string) (string, bool) { return "", k == envName(name) })
					check(t, err)
				})
				if _, ok := flags().fs.Lookup(name).Value.(*stringValue); ok {
					t.Run(cmd+"/--"+name+"=", func(t *testing.T) {
						_, err := flags().parse([]string{"--" + name, ""}, unset)
						check(t, err)
					})
				}
			}
		}
	}
}
