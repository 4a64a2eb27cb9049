package main

import (
	"cmp"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// stampedVersion is the release's version, stamped by scripts/release with
// -ldflags "-X main.stampedVersion=v1.2.3". Other builds leave it empty and
// take the module's version from the build info.
var stampedVersion string

// buildVersion is what leasehold version reports: where this binary came
// from.
type buildVersion struct {
	// Version is the stamped release version; else the module's version
	// in the build info: the tag for go install ...@v1.2.3, a
	// pseudo-version or "(devel)" for a build from a checkout.
	Version string
	// Commit is the VCS revision the binary was built from, Modified
	// whether the checkout had uncommitted changes, CommitTime the
	// commit's time (RFC 3339); all empty when the build did not record
	// them (go install ...@version, or -buildvcs=false).
	Commit     string
	Modified   bool
	CommitTime string
	// Go is the Go version it was built with; Platform is GOOS/GOARCH.
	Go       string
	Platform string
}

// currentVersion is this binary's buildVersion.
func currentVersion() buildVersion {
	bi, _ := debug.ReadBuildInfo()
	return versionOf(bi, stampedVersion)
}

// versionOf reads bi (nil when the binary has no build info), preferring
// the stamped version.
func versionOf(bi *debug.BuildInfo, stamped string) buildVersion {
	v := buildVersion{Version: stamped, Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi == nil {
		v.Version = cmp.Or(v.Version, "unknown")
		return v
	}
	v.Version = cmp.Or(v.Version, bi.Main.Version, "(devel)")
	v.Go = cmp.Or(bi.GoVersion, v.Go)
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Commit = s.Value
		case "vcs.time":
			v.CommitTime = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	return v
}

// commitText is the commit as shown: "unknown" when not recorded, with
// "(modified)" after it for a build from a checkout with changes.
func (v buildVersion) commitText() string {
	switch {
	case v.Commit == "":
		return "unknown"
	case v.Modified:
		return v.Commit + " (modified)"
	}
	return v.Commit
}

// printVersion is leasehold version (and --version).
func printVersion(w io.Writer, v buildVersion) {
	row := func(k, val string) { fmt.Fprintf(w, "%-8s %s\n", k, val) }
	row("version", v.Version)
	row("commit", v.commitText())
	if v.CommitTime != "" {
		row("date", v.CommitTime)
	}
	row("go", v.Go)
	row("platform", v.Platform)
}

// cmdVersion is leasehold version: it takes no flags but --help.
func cmdVersion(args []string, env *environment) error {
	if len(args) > 0 {
		if args[0] == "-h" || args[0] == "-help" || args[0] == "--help" {
			printVersionHelp(env.stdout)
			return errHelp
		}
		return exitf(exitUsage, "version: unexpected argument %q (see leasehold help version)", args[0])
	}
	printVersion(env.stdout, currentVersion())
	return nil
}
