package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// envPrefix starts the environment variable of every flag: --health-url is
// also LEASEHOLD_HEALTH_URL. A flag on the command line wins over its
// variable. A variable that is set is given, as its flag on the command
// line is: an empty one is refused, as an empty flag value is (emptyValue),
// never read as unset.
const envPrefix = "LEASEHOLD_"

// envName is the environment variable that sets the flag name.
func envName(name string) string {
	return envPrefix + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// flagSet is a flag.FlagSet whose flags can also be set from environment
// variables, listed in the order they were defined, under headings.
type flagSet struct {
	fs     *flag.FlagSet
	cmd    string
	groups []flagGroup
}

type flagGroup struct {
	title string
	names []string
}

// flagDefault describes a default that is computed, not a constant.
type flagDefault struct{ text string }

func newFlagSet(cmd string) *flagSet {
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are returned, and printed as one line
	fs.Usage = func() {}
	return &flagSet{fs: fs, cmd: cmd}
}

// group starts a new heading for the flags defined after it.
func (f *flagSet) group(title string) { f.groups = append(f.groups, flagGroup{title: title}) }

func (f *flagSet) add(name string) {
	g := &f.groups[len(f.groups)-1]
	g.names = append(g.names, name)
}

// String defines a string flag, which refuses an empty value.
func (f *flagSet) String(p *string, name, value, usage string) {
	*p = value
	f.fs.Var(&stringValue{p: p, name: name}, name, usage)
	f.add(name)
}

// stringValue is a string flag's value: any text but the empty one, which
// a variable left unset in a script gives (--period "$TICK") and which
// would silently mean the flag's default, such as no period at all.
type stringValue struct {
	p    *string
	name string
}

func (s *stringValue) String() string {
	if s.p == nil { // flag.Value's contract: String may be called on a zero value
		return ""
	}
	return *s.p
}

func (s *stringValue) Set(v string) error {
	if v == "" {
		return emptyValue(s.name)
	}
	*s.p = v
	return nil
}

// emptyValue is the error for an empty value given for the flag name, on
// the command line or in its environment variable: leasehold never reads
// one as "not given", since a flag given empty by mistake would then
// silently change what the command does (--period "" would run a
// scheduled job with no period, so twice for one tick).
func emptyValue(name string) error {
	return fmt.Errorf("must not be empty: leave --%s out, and %s unset, for its default", name, envName(name))
}

func (f *flagSet) Bool(p *bool, name string, usage string) {
	f.fs.BoolVar(p, name, false, usage)
	f.add(name)
}

func (f *flagSet) Int(p *int, name string, value int, usage string) {
	f.fs.IntVar(p, name, value, usage)
	f.add(name)
}

// alias makes -short another name of the flag long, with no variable of
// its own.
func (f *flagSet) alias(short, long string) {
	fl := f.fs.Lookup(long)
	f.fs.Var(fl.Value, short, "the same as --"+long)
}

// Duration defines a duration flag; 0 means "the default", which usage
// states when it is computed.
func (f *flagSet) Duration(p *time.Duration, name string, value time.Duration, usage string) {
	*p = value
	f.fs.Var((*durationValue)(p), name, usage)
	f.add(name)
}

// durationValue is a non-negative duration in Go syntax, with an error
// message that says so.
type durationValue time.Duration

func (d *durationValue) String() string { return time.Duration(*d).String() }

func (d *durationValue) Set(s string) error {
	v, err := time.ParseDuration(s)
	switch {
	case err != nil:
		return errors.New("not a duration (Go syntax: 500ms, 15s, 1m30s)")
	case v < 0:
		return errors.New("must not be negative")
	}
	*d = durationValue(v)
	return nil
}

// givenToCommand are the flags whose variables leasehold also gives the
// command it runs, saying what that run is (supervisor.start, the shard's
// job): in a command's environment they describe its parent, and would
// configure a leasehold the command runs as the parent is (red team 14: a
// shard's command that ran leasehold run --lease URL started a group of
// two shards, and ran its step twice at once). LEASEHOLD_PREFER is not
// given but inherited, and describes the parent all the same (red team
// 30: a nested run --once refused the parent's preference).
var givenToCommand = map[string]bool{"lease": true, "identity": true, "progress-file": true, "period": true, "shards": true, "holders": true, "prefer": true}

// parse sets flags from their environment variables (lookupEnv), then
// from args, and returns the arguments after the flags. A variable that is
// set but empty is refused (emptyValue). Inside a command that leasehold
// runs (LEASEHOLD_TOKEN is set), the variables of givenToCommand are not
// read.
func (f *flagSet) parse(args []string, lookupEnv func(string) (string, bool)) ([]string, error) {
	var errs []error
	_, inCommand := lookupEnv(envPrefix + "TOKEN")
	for _, g := range f.groups {
		for _, name := range g.names {
			v, ok := lookupEnv(envName(name))
			if !ok || inCommand && givenToCommand[name] {
				continue
			}
			err := emptyValue(name)
			if v != "" {
				err = f.fs.Set(name, v)
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("%s=%s: %v", envName(name), strconv.Quote(v), err))
			}
		}
	}
	if len(errs) > 0 {
		return nil, errs[0]
	}
	if err := f.fs.Parse(args); err != nil {
		return nil, err
	}
	return f.fs.Args(), nil
}

// set reports whether the flag name was given, on the command line or in
// its environment variable.
func (f *flagSet) set(name string) bool {
	found := false
	f.fs.Visit(func(fl *flag.Flag) { found = found || fl.Name == name })
	return found
}

// flagDoc is what the help says of one flag: the same for leasehold
// COMMAND --help and the generated reference, docs/cli.md.
type flagDoc struct {
	name  string // without the dashes
	kind  string // the argument's kind (duration, URL, N), or "" for a bool
	usage string // what it does; lines end with \n
	env   string // its environment variable
	def   string // its default as the help states it, or ""
}

// flagGroupDoc is a heading of the help's flags and the flags under it.
type flagGroupDoc struct {
	title string
	flags []flagDoc
}

// docs returns the flags, with their variables and defaults, under their
// headings, in the order they were defined. defaults overrides the
// default shown for computed ones.
func (f *flagSet) docs(defaults map[string]string) []flagGroupDoc {
	var out []flagGroupDoc
	for _, g := range f.groups {
		out = append(out, flagGroupDoc{title: g.title})
		for _, name := range g.names {
			fl := f.fs.Lookup(name)
			kind, usage := flag.UnquoteUsage(fl)
			if _, ok := fl.Value.(*durationValue); ok {
				kind = "duration"
			}
			def, ok := defaults[name]
			if !ok && fl.DefValue != "" && fl.DefValue != "false" && fl.DefValue != "0s" && fl.DefValue != "0" {
				def = fl.DefValue
			}
			d := &out[len(out)-1]
			d.flags = append(d.flags, flagDoc{name: name, kind: kind, usage: usage, env: envName(name), def: def})
		}
	}
	return out
}

// usage writes the flags, with their variables and defaults, under their
// headings. defaults overrides the default shown for computed ones.
func (f *flagSet) usage(w io.Writer, defaults map[string]string) {
	for _, g := range f.docs(defaults) {
		fmt.Fprintf(w, "\n%s:\n", g.title)
		for _, d := range g.flags {
			head := "  --" + d.name
			if d.kind != "" {
				head += " " + d.kind
			}
			fmt.Fprintf(w, "%s\n", head)
			fmt.Fprintf(w, "        %s\n", strings.ReplaceAll(d.usage, "\n", "\n        "))
			if d.def != "" {
				fmt.Fprintf(w, "        (env %s; default %s)\n", d.env, d.def)
			} else {
				fmt.Fprintf(w, "        (env %s)\n", d.env)
			}
		}
	}
}
