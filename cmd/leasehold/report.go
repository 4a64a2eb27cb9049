package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"

	"github.com/leasehold/leasehold/lease"
)

// reportOptions are the options of a command that prints a report on a
// lease (status, check, break): the common ones and --output.
type reportOptions struct {
	commonOptions
	output string
}

// defineOutput starts the Output group with --output (-o).
func (o *reportOptions) defineOutput(f *flagSet) {
	f.group("Output")
	f.String(&o.output, "output", "text", "output `format`: text or json (-o for short)")
	f.alias("o", "output")
}

// print writes rep as JSON for -o json, else with text.
func (o *reportOptions) print(w io.Writer, rep any, text func()) error {
	if o.output == "json" {
		return printJSON(w, rep)
	}
	text()
	return nil
}

// reporter is a command that prints a report on a lease: its name, its
// flags and help, and where its options land once parsed.
type reporter struct {
	name  string
	flags *flagSet
	help  func(io.Writer, *flagSet)
	opts  *reportOptions
}

// parse parses args and the environment into r's options, and returns the
// logger they ask for. It prints the help and returns errHelp for --help;
// any other error is a usageError.
func (r reporter) parse(args []string, env *environment) (*slog.Logger, error) {
	o := r.opts
	rest, err := r.flags.parse(args, env.lookupEnv)
	if errors.Is(err, flag.ErrHelp) {
		r.help(env.stdout, r.flags)
		return nil, errHelp
	}
	if err == nil && len(rest) > 0 {
		err = fmt.Errorf("unexpected argument %q", rest[0])
	}
	if err == nil {
		err = o.finish(env)
	}
	if err == nil && o.output != "text" && o.output != "json" {
		err = fmt.Errorf("--output %q: want text or json", o.output)
	}
	if err != nil {
		return nil, usageError(r.name, err)
	}
	log, err := newLogger(env.stderr, o.logFormat, o.logLevel)
	if err != nil {
		return nil, usageError(r.name, err)
	}
	return log, nil
}

// open parses as parse does, and opens the lease.
func (r reporter) open(ctx context.Context, args []string, env *environment) (lease.Lease, *slog.Logger, error) {
	log, err := r.parse(args, env)
	if err != nil {
		return nil, nil, err
	}
	o := r.opts
	l, err := openLease(ctx, o.lease, o.leaseOptions(), o.startTimeout, log)
	return l, log, err
}

// printJSON prints v as indented JSON.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
