package main

import (
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
	"github.com/leasehold/leasehold/shard"
)

func printHelp(w io.Writer) {
	fmt.Fprintf(w, `leasehold runs a command only while this instance is the leader.

Start "leasehold run" on every instance of a service (ECS tasks, Azure
workers, VMs, cron hosts). They compete for one lease, a small object in
cloud storage; the one that holds it runs the command, keeps the lease by
renewing it, and the others wait. When the leader stops, its lease is
released and another instance takes over at once; when it crashes or is cut
off, the lease lapses after its TTL and another takes over then. The command
never outlives the lease.

Usage:
  leasehold run --lease URL [flags] -- COMMAND [ARGS...]
  leasehold run --once --lease URL [flags] -- COMMAND [ARGS...]
  leasehold run --shards N --lease URL [flags] -- COMMAND [ARGS...]
  leasehold run --holders N --lease URL [flags] -- COMMAND [ARGS...]
  leasehold status --lease URL [--watch DURATION] [-o json]
  leasehold status --shards N --lease URL [--watch DURATION] [-o json]
  leasehold status --holders N --lease URL [--watch DURATION] [-o json]
  leasehold check --lease URL [--ttl DURATION] [-o json]
  leasehold break --lease URL [--force] [-o json]
  leasehold handoff --lease URL [--to IDENTITY] [-o json]
  leasehold version
  leasehold help [run | status | check | break | handoff | version]

Lease URLs (schemes in this build: %s):
  s3://BUCKET/KEY?region=REGION
        an object in Amazon S3 (MinIO, LocalStack: add
        &endpoint=http://HOST:PORT&use_path_style=true). The bucket must
        exist.
  dynamodb://TABLE/NAME?region=REGION
        an item in a DynamoDB table whose partition key is the string
        "lease".
  azblob://CONTAINER/BLOB?account=ACCOUNT
        a blob's native lease in Azure Blob Storage (or
        ?connection_string_env=VAR; with neither, the connection string in
        AZURE_STORAGE_CONNECTION_STRING). The container must exist.
  gs://BUCKET/OBJECT
        an object in Google Cloud Storage (fake-gcs-server: set
        STORAGE_EMULATOR_HOST=HOST:PORT). The bucket must exist.
  mem://NAME
        in this process only: to try leasehold out.
  quorum:URL,URL,URL
        a lease held on a majority of 3 or 5 of the leases above (any
        stores, mixed: buckets or tables in different regions or clouds):
        its leader outlives any minority's outage; n times a lease's cost.
        Every instance lists the members in the same order; a comma inside
        a member's URL is written %%2C. Not with --shards yet.
  AWS credentials come from the default chain (environment, profile, ECS
  task role), Azure ones from managed identity, workload identity or az
  login, Google Cloud ones from Application Default Credentials (the
  service account of Cloud Run, GKE or Compute Engine, or gcloud auth
  application-default login). Never delete a lease object: it holds the fencing counter.

%s
Every flag can also be set by an environment variable named after it:
--lease is LEASEHOLD_LEASE, --health-url is LEASEHOLD_HEALTH_URL. A flag on
the command line wins. An empty value is refused (exit 64), given as a
flag or as a variable that is set: leave the flag out, and the variable
unset, for its default (so --period "$TICK" with TICK unset fails instead
of running with no period). Durations are in Go syntax: 500ms, 15s, 1m30s.

Try it:
  leasehold run --lease mem://try -- sh -c 'echo "leading with token $LEASEHOLD_TOKEN"'

Before deploying, "leasehold check --lease URL" says whether the lease can
be used safely: credentials, store, conditional writes, permissions, TTL
and cost. Then see "leasehold run --help" for what the command gets, how it is
stopped, exit statuses, and examples for ECS and Azure.
`, strings.Join(lease.Schemes(), ", "), permissionsHelp())
}

// shardCost says what a shard group costs per instance, from the requests
// package shard makes (shard.SteadyRequests), per renew interval and per
// hour at the default TTL: the one text of it, in run's help, docs/shards.md
// and package shard's doc (TestShardCostDocumented).
func shardCost() string {
	member, campaigner, assigner := shard.SteadyRequests(1)
	azureMember, _, azure := shard.SteadyRequests(2)
	r := lease.DefaultRenewInterval(lease.DefaultTTL)
	hourly := func(perR float64) string { return thousands(perR * float64(time.Hour) / float64(r)) }
	return fmt.Sprintf("Cost per instance, whatever N is, with R the renew interval: %g write per R (its liveness lease's renewal) and %g reads "+
		"(the assignment, answered \"unchanged\" unless it changed, and its own acknowledgement every fourth time), plus %g reads per R while it campaigns to be the group's assigner; "+
		"the assigner's instance renews the assigner lease too (%g writes per R), and lists the group %g times per R. "+
		"On Azure Blob every renewal is two writes (the renewal, and the metadata write that shows it). "+
		"Per hour at the default TTL (%v, R %v): each instance %s writes (%s on Azure Blob) and %s to %s reads, the assigner's %s writes (%s on Azure Blob), %s reads and %s listings. "+
		"Shard records are written only when ownership changes.",
		member.Writes, member.Reads, campaigner.Reads-member.Reads, assigner.Writes, assigner.Lists,
		lease.DefaultTTL, r, hourly(member.Writes), hourly(azureMember.Writes), hourly(member.Reads), hourly(campaigner.Reads), hourly(assigner.Writes), hourly(azure.Writes), hourly(assigner.Reads), hourly(assigner.Lists))
}

// thousands formats n, rounded to a whole number, with a comma between
// thousands: "1,280".
func thousands(n float64) string {
	s := fmt.Sprintf("%.0f", math.Round(n))
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// permissionsHelp lists, per backend, the TTLs its store allows, where it
// limits them, and what a least-privilege identity is granted: each
// backend's driver.Store, its probe's grants included.
func permissionsHelp() string {
	var b strings.Builder
	b.WriteString("TTLs, where a store allows fewer than others:\n")
	for _, s := range driver.Stores() {
		if s.TTLs != "" {
			fmt.Fprintf(&b, "  %s://  %s\n", s.Scheme, s.Name)
			b.WriteString(wrap(s.TTLs, "        ", 76))
		}
	}
	b.WriteString("\nPermissions of least privilege, every one the backend's calls need (the\nterraform modules in leasehold's repository grant exactly these):\n")
	for _, s := range driver.Stores() {
		if len(s.Grants) == 0 {
			continue
		}
		fmt.Fprintf(&b, "  %s://  %s\n", s.Scheme, s.Name)
		for _, g := range s.Grants {
			line := g.String()
			switch {
			case g.Probe:
				line += " (the store's check before the first write)"
			case g.Group:
				line += " (shard groups only)"
			}
			b.WriteString(wrap(line, "        ", 76))
		}
	}
	return b.String()
}

// ttlHelp is check's help on the ttl check, from each backend's
// driver.Store.
func ttlHelp() string {
	var limits []string
	for _, s := range driver.Stores() {
		if s.TTLs != "" {
			limits = append(limits, s.Name+": "+s.TTLs)
		}
	}
	text := "the store allows the TTL (" + strings.Join(limits, "; ") + "), and it is at least " + minNetworkTTL.String() + " on a store across a network (all but memory), whose calls may each take a fifth of it. If not, the other checks are made at the default TTL."
	return "  ttl" + strings.TrimPrefix(wrap(text, strings.Repeat(" ", 22), 76), strings.Repeat(" ", 5))
}

// conditionsHelp is check's help on the conditional writes check, from
// each backend's driver.Store: which stores are probed, and how.
func conditionsHelp() string {
	var probed, not []string
	for _, s := range driver.Stores() {
		switch {
		case s.Probe != "":
			probed = append(probed, s.Name)
		case s.Judge == lease.JudgedByStore:
			not = append(not, s.Name)
		}
	}
	text := "the store enforces them (" + strings.Join(probed, ", ") + ": four probe writes to an object or item beside the lease, KEY" + driver.ProbeSuffix +
		", never the lease itself; a store that ignores them fails here, naming the step, and a probe the store refuses to the credentials fails as permission denied, naming the grants it needs); skipped on " +
		strings.Join(not, ", ") + ", whose native lease needs none"
	return "  conditional writes" + strings.TrimPrefix(wrap(text, strings.Repeat(" ", 22), 76), strings.Repeat(" ", 20))
}

// storeNames names the registered stores whose leases judge runs, by
// scheme: "Amazon S3, Google Cloud Storage and memory".
func storeNames(judge lease.Judge) string {
	var names []string
	for _, s := range driver.Stores() {
		if s.Judge == judge {
			names = append(names, s.Name)
		}
	}
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// bullet is text as an item of a list: "  - " and the text, wrapped.
func bullet(text string) string {
	return "  - " + strings.TrimPrefix(wrap(text, "    ", 76), "    ")
}

// wrap breaks text into lines of at most width bytes, each after indent,
// at spaces (a word longer than a line gets a line of its own).
func wrap(text, indent string, width int) string {
	var b strings.Builder
	line := indent
	for _, word := range strings.Fields(text) {
		if len(line) > len(indent) && len(line)+1+len(word) > width {
			b.WriteString(line + "\n")
			line = indent
		}
		if len(line) > len(indent) {
			line += " "
		}
		line += word
	}
	b.WriteString(line + "\n")
	return b.String()
}

func printRunHelp(w io.Writer, f *flagSet) {
	fmt.Fprintf(w, `Usage: leasehold run --lease URL [flags] -- COMMAND [ARGS...]
       leasehold run --shards N --lease URL [flags] -- COMMAND [ARGS...]
       leasehold run --holders N --lease URL [flags] -- COMMAND [ARGS...]

Campaigns for the lease; once elected, starts COMMAND and keeps renewing the
lease while it runs. The "--" ends leasehold's flags: everything after it is
the command and its arguments, run without a shell (write sh -c '...' for
one).

The command gets:
  LEASEHOLD_TOKEN     the fencing token of this term: greater than every
                      earlier one. Send it with every write the leader
                      makes, so that the systems it writes to can refuse a
                      deposed leader's late writes.
  LEASEHOLD_LEASE     the lease URL
  LEASEHOLD_IDENTITY  this instance's identity
  LEASEHOLD_PROGRESS_FILE  with --progress-file
  LEASEHOLD_PERIOD    with --period or --every: the period key it runs for
  leasehold's own environment, its stdout and stderr; stdin is /dev/null.
  These variables (and LEASEHOLD_SHARD, LEASEHOLD_SHARDS, LEASEHOLD_SLOT,
  LEASEHOLD_SLOTS) are always this run's, or unset: never taken from
  leasehold's own environment.
Those of them that are also leasehold's flags' variables (LEASEHOLD_LEASE,
LEASEHOLD_IDENTITY, LEASEHOLD_PROGRESS_FILE, LEASEHOLD_PERIOD,
LEASEHOLD_SHARDS, and LEASEHOLD_HOLDERS), and LEASEHOLD_PREFER, inherited,
describe this run: a leasehold
that the command runs (LEASEHOLD_TOKEN set) does not read them; give it its
flags.
It runs in a process group of its own: signals go to the whole group,
and to every process descended from the command that left the group
(setsid, a daemon's double fork), so that none outlives the command. On
Linux leasehold adopts such a process when its parent exits (it is a
child subreaper) and kills it with the command. macOS has no subreaper: a
process whose parent exits before leasehold stops the command is out of
its reach there; let the command keep the processes it starts as its
children (no daemonizing), and stop them itself on SIGTERM.

When the command exits by itself, leasehold releases the lease and exits
with the command's status (or, with --rerun, campaigns again after
--campaign-interval, doubled each time in a row that the command fails
quickly, up to 16 times that).

How the command is stopped:
  - Voluntary step-down: leasehold gets SIGTERM, SIGINT or SIGHUP (ECS,
    systemd, Ctrl-C, a closed terminal or SSH session; under nohup SIGHUP
    stays ignored), or the health check fails: SIGTERM to the command's
    process group. leasehold keeps renewing the lease for up to --grace, sends
    SIGKILL if the command is still running then, and releases the lease
    only after the command has exited; another instance takes over at once.
    A second SIGTERM or SIGINT skips the rest of the grace period; a
    repeated SIGHUP does not (a closed terminal sends it more than once).
  - The lease is lost or cannot be renewed (store unreachable, leader cut
    off): SIGTERM, then SIGKILL no later than --kill-margin before the lease
    could be taken over (its TTL counted from when the last successful
    renewal was sent), whatever --grace says. A lost lease means SIGKILL at
    once.
  - leasehold itself is killed (SIGKILL, OOM): on Linux the kernel kills the
    command too (parent-death signal). Only the command itself: if it is a
    shell script, let it "exec" its worker, or run leasehold as the
    container's entry point so the container dies with it. macOS and the
    BSDs have no such signal: there a leasehold killed with SIGKILL (or
    crashed) leaves its command running without the lease. Stop leasehold
    there with SIGTERM only (launchd: set ExitTimeOut above --grace plus a
    few seconds, as launchd sends SIGKILL when it runs out), and let the
    command exit when its parent process ID changes (its leasehold is gone).
  - Job control: Ctrl-Z (SIGTSTP), or SIGTTIN/SIGTTOU, stops the command's
    process group with leasehold. When leasehold is continued (fg, bg,
    SIGCONT) the command is continued only if the term is still within its
    renew deadline; otherwise leadership ends as for failing renewals, and
    the command is killed no later than --kill-margin before another
    instance could take the lease over. SIGSTOP cannot
    be caught: sent to leasehold alone it leaves the command running, so
    send SIGTSTP instead. As process 1 leasehold ignores these signals.
  - Logs never hold a stop up: leasehold's log lines wait for stderr in a
    buffer of its own (1 MiB). When stderr takes no writes (a full pipe, a
    stalled log collector) the lines that do not fit are dropped, and a
    warning ("log lines dropped", dropped=N) says how many, where they
    went missing, once stderr takes writes again; at exit leasehold waits
    at most 2s for the lines still queued. A stderr whose reader
    has gone (a log collector that exited, a "| tee" that died) loses
    leasehold's lines and stops nothing: leasehold catches SIGPIPE, and the
    command runs with SIGPIPE as leasehold found it.
  Set --grace below your orchestrator's stop timeout (ECS stopTimeout, 30s
  by default; Azure Container Apps terminationGracePeriodSeconds, 30s;
  systemd TimeoutStopSec, 90s), leaving time for the release.

Sharded runs (--shards N): the instances share N shards, 0 to N-1, as a
group at the --lease prefix (s3://BUCKET/PREFIX, mem://NAME; stores in this
build: %s). Each instance runs one command per shard it owns; at most
one instance runs a shard at any instant, and once settled each of M
instances owns N/M shards, rounded down or up. The command also gets:
  LEASEHOLD_SHARD     its shard, 0 to N-1
  LEASEHOLD_SHARDS    N
  LEASEHOLD_TOKEN     the shard's epoch: greater than that of every earlier
                      start of the shard, on any instance; fence with it as
                      with a lease's token
A shard moves only when balance needs it (a join, a leave, a crash): its
command is stopped as on a step-down (SIGTERM, --grace, SIGKILL), and the
shard starts elsewhere only once the command has exited. On SIGTERM every
command is stopped so, and the shards start elsewhere within about a renew
interval; the group's assigner keeps its assigner lease renewed through
the grace period too, as it does its liveness lease. An instance that
cannot renew its own liveness lease stops every command as when a lease is
lost, and so does the assigner that cannot renew its assigner lease: each
command is killed no later than --kill-margin before either lease its shard
rests on could be taken over. A crashed instance's shards start elsewhere
after its TTL. A command that exits by itself ends leasehold run
with its status, its other shards stopped and released. Give each instance
a stable --identity: one restarted under the same identity within a TTL
gets its shards back. Every instance must give the same --shards, --ttl
and --renew-interval (a different one exits 78); --once, --rerun,
--campaign-interval and --cool-down do not apply. "leasehold status
--shards N --lease URL --watch TTL" shows the members, their shards and the
balance, and tells a crashed member from a live one.
%s
N holders (--holders N): at most N instances run the command at once, as
Consul's "lock -n" allows, but each is fenced. It is a group of N shards,
called slots, of which an instance holds at most one; everything above
about shards holds of slots. An instance runs the command only while it
holds a slot; with more than N instances the others wait, and with fewer
some slots stay free until more come. The command also gets:
  LEASEHOLD_SLOT      its slot, 0 to N-1
  LEASEHOLD_SLOTS     N
  LEASEHOLD_TOKEN     the slot's epoch, as with --shards
An instance that holds a slot keeps it while it lives. One that leaves
(SIGTERM) frees its slot once its command has exited, to a waiting
instance within about a renew interval; a crashed one's slot goes to a
waiting instance after its TTL (within TTL plus a renew interval of the
crash). Every instance must give the same --holders (a group of --shards,
or of another N, exits 78); "leasehold status --holders N --lease URL"
shows who holds which slot and who waits.

Preferred leaders (--prefer VALUE): leadership goes to the instance whose
VALUE orders last, in natural order ("1.10.0" after "1.9.3"): give the
build's version, and a rolling deploy that starts each new instance before
it stops an old one moves leadership once, to the first new instance,
instead of to whichever instance reads first at each old leader's stop.
An instance whose VALUE orders after the leader's announces itself in the
key beside the lease's (KEY.candidates, in the same store; on a quorum,
beside each member's); the leader,
which reads that key once per renewal, stops its command as for a
voluntary step-down (SIGTERM, --grace) and then hands the lease to that
instance, which takes it at once: no other instance can in between, and
if the chosen one has gone, another takes the lease a TTL later, as after
a crash. Instances that do not order after the leader cost what they did.
"leasehold handoff --lease URL [--to IDENTITY]" asks such a leader to hand
over on purpose (give every instance the same VALUE to hand over only on
request). Not with --once, --shards or --holders, nor on an Azure lease of
infinite duration (infinite_lease=true). A key that ends in .candidates is
another lease's candidates' key: run refuses it as --lease.

Health (optional; after --health-threshold failures in a row, or no
progress within --stall-timeout, the leader steps down as above, releases
the lease and waits --cool-down before campaigning again):
  --health-cmd 'CMD'     run with sh -c; exit status 0 is healthy
  --health-url URL       GET; a 2xx answer is healthy
  --stall-timeout D      with --progress-file PATH (the command touches the
                         file to show progress; polled every 250ms) or
                         --progress-on-stdout (every line the command prints
                         counts; its stdout then goes through a pipe, so a
                         program that buffers output when not on a terminal
                         must flush each line)

Scheduled jobs (--once with --period or --every): every instance of a
scheduled job fires for the same tick (cron on several hosts, an ECS
scheduled task, an EventBridge rule, which delivers at least once, a
CronJob started twice). With --period KEY, the command runs at most once
per key, whichever instance wins and however late the others fire: the
lease record keeps the latest period started, written before the command
starts, and an instance whose key is at or before it exits 76.
  --period KEY      the tick's name: its scheduled time in RFC 3339 (such as
                    EventBridge's "time") or a number. Keys compare as times
                    when both are RFC 3339, as numbers when both are
                    integers, byte by byte otherwise. At most 64 bytes of
                    letters, digits and -._:+/@.
  --every D         for triggers that do not say which tick they fire for:
                    the key is the time of the nearest tick, the multiples
                    of D since 1970-01-01 UTC (plus --every-offset), so a
                    host up to D/2 early or less than D/2 late (a skewed
                    clock, a cold start, a late delivery) gets the same key.
                    This is the only time leasehold reads the wall clock.
  --retry-failed    a command that exited non-zero, was stopped, or whose
                    instance crashed does not count: a later trigger of the
                    same period runs it again (at least once while triggers
                    come). Default: a period counts as run once its command
                    started (at most once). A trigger that comes while the
                    period runs watches the record until it changes: it
                    exits 75 if the command still runs at the winner's next
                    renewal (a renew interval after it started; Azure: at
                    once), else 76 if the command succeeded, or runs it if
                    it failed.
  --min-hold D      for jobs with no period: keep others out for at least D
                    after the command started. When the command has exited,
                    leasehold marks the lease held after a run, keeps
                    renewing it (health checks off) until D has passed,
                    releases it and exits. A duplicate fired meanwhile exits
                    75 within a renew interval (Azure: at once). A SIGTERM,
                    SIGINT or SIGHUP after the command exited does not end
                    the hold (leasehold logs until when it goes on); a
                    second SIGTERM or SIGINT exits at once without
                    releasing (a repeated SIGHUP does not), and the
                    lease lapses a TTL after its last renewal (once the
                    hold is over, a release under way may still land:
                    leasehold says how far it had gone). So does a
                    SIGKILL (an orchestrator's stop timeout, e.g. ECS
                    stopTimeout): it ends the hold early, and the lease
                    lapses a TTL later.

Exit status:
  0        the command ran and exited 0; or, without --once, leasehold was
           stopped by SIGTERM/SIGINT/SIGHUP and stepped down cleanly
  1-125    the command ran and exited with this status
  128+N    the command was killed by signal N; with --once, leasehold was
           stopped by signal N (129 SIGHUP, 130 SIGINT, 143 SIGTERM)
  64       bad flags, environment variables or arguments
  69       the store could not be reached within --start-timeout, or did
           not answer while campaigning with --once
  70       --once: leadership ended before the command finished (lease lost,
           renew deadline passed, unhealthy) and the command was stopped
  75       --once: not elected, another instance holds the lease
  76       --once with --period or --every: the period already ran, or is
           running, on another instance; the command did not run here
  78       the lease cannot be used as configured: unknown scheme or bad
           URL, missing bucket, no or refused credentials, an object at
           the key that is not a lease, a store that does not enforce
           conditional writes, --listen cannot bind
  126/127  the command cannot be run / was not found
  A command that itself exits 64-78 cannot be told from leasehold but by
  the log line leasehold prints on stderr.
`, strings.Join(driver.ObjectSchemes(), ", "), wrap(shardCost(), "", 75))
	f.usage(w, merge(commonDefaults, runDefaults))
	fmt.Fprint(w, `
/healthz answers 200 while leasehold runs. /leader answers 200 while this
instance leads and its command runs, 503 otherwise (also while it steps
down). /metrics has leasehold_is_leader, leasehold_transitions_total{reason},
leasehold_renew_duration_seconds, leasehold_renew_failures_total{reason},
leasehold_ttl_seconds (--ttl) and
leasehold_build_info{version,commit,goversion}; with a quorum lease also
leasehold_quorum_member_failures_total{member} (renewals a member did not
take while the leader led on) and leasehold_quorum_members_held. With
--shards or --holders, /leader
answers 200 while this instance is the group's assigner, 503 otherwise
(naming the assigner it last saw); /shards answers 200 while this instance
runs at least one shard's command, 503 otherwise, with its shards and their
epochs as JSON ([{"shard":3,"epoch":4294967297}]); in /metrics
leasehold_is_leader is 1 on the group's assigner, 0 elsewhere, there is no
leasehold_transitions_total, and there are leasehold_shards_owned,
leasehold_shards (--shards, or --holders' N), leasehold_shard_events_total{event} (assigned,
revoked, lost, ended), and on the group's assigner
leasehold_shard_balance_seconds (time from a change to balance) and
leasehold_shard_grants_total; the renewal metrics are the liveness lease's.

Examples:

  Amazon ECS: every task of the service runs the worker under leasehold;
  one at a time works. In the task definition's container:

    "command": ["leasehold", "run", "--", "python", "worker.py"],
    "environment": [
      {"name": "LEASEHOLD_LEASE", "value": "s3://my-leases/reconciler?region=eu-west-1"},
      {"name": "LEASEHOLD_GRACE", "value": "20s"},
      {"name": "LEASEHOLD_LISTEN", "value": ":9090"},
      {"name": "LEASEHOLD_LOG_FORMAT", "value": "json"}
    ],
    "stopTimeout": 30

  The identity defaults to "ecs-" and the task ID; the task role needs the
  permissions "leasehold help" lists. (terraform/examples/aws-ecs and
  terraform/examples/azure in leasehold's repository set all this up.)

  Azure Container Apps: the same in the app's YAML (az containerapp update
  -n reconciler -g my-rg --yaml app.yaml), with a managed identity that has
  the data actions "leasehold help" lists on the container; the identity
  defaults to the replica name (CONTAINER_APP_REPLICA_NAME; on App Service, the
  instance: WEBSITE_INSTANCE_ID):

    template:
      containers:
      - name: reconciler
        image: myregistry.azurecr.io/reconciler:1
        command: ["leasehold", "run", "--"]
        args: ["./reconcile"]
        env:
        - {name: LEASEHOLD_LEASE, value: "azblob://leases/reconciler?account=mystorageaccount"}
        - {name: LEASEHOLD_GRACE, value: "20s"}
        - {name: AZURE_CLIENT_ID, value: "CLIENT ID of the managed identity"}

  A cron job that must run on one host only, each night:

    0 2 * * *  leasehold run --once --lease s3://my-leases/nightly -- /opt/report.sh

  A health check and a stall watchdog:

    leasehold run --lease URL --health-url http://127.0.0.1:8080/healthz \
      --stall-timeout 2m --progress-file /tmp/progress -- ./worker

  64 partitions consumed by however many instances run, one consumer per
  partition, each fenced by its shard's epoch:

    leasehold run --shards 64 --lease s3://my-leases/orders --identity "$HOSTNAME" \
      -- sh -c 'exec ./consume --partition "$LEASEHOLD_SHARD" --epoch "$LEASEHOLD_TOKEN"'

  At most 3 of however many instances crawl at once, each with its own
  slot and fenced by its epoch:

    leasehold run --holders 3 --lease s3://my-leases/crawlers --identity "$HOSTNAME" \
      -- sh -c 'exec ./crawl --worker "$LEASEHOLD_SLOT" --epoch "$LEASEHOLD_TOKEN"'
`)
}

func printStatusHelp(w io.Writer, f *flagSet) {
	fmt.Fprintf(w, `Usage: leasehold status --lease URL [--watch DURATION] [-o json]
       leasehold status --shards N --lease URL [--watch DURATION] [-o json]
       leasehold status --holders N --lease URL [--watch DURATION] [-o json]

Reads the lease and says who holds it. It never writes to it.

%s
Fields (text and -o json):
  state          none: never acquired; released: free, the next contender
                 takes it at once; held; lapsed: held, but unchanged for at
                 least its TTL during the watch, in reads that followed each
                 other within the holder's renew interval (the holder
                 stopped renewing; not on Azure)
  holder         the identity that last acquired it; "unknown" for a blob
                 whose Azure lease no leasehold record names (another
                 tool's, a person's, or a contender's that has not yet
                 written its name; json: unknown_holder), whose ttl is then
                 the longest it may still last: at most 60s for a lease of
                 fixed duration (Azure does not say how much is left), none
                 for an infinite one
  token          the fencing token of that acquisition
  ttl            the holder's time to live
  released       whether the holder gave it up
  prefer         the holder's --prefer, if it runs with one
  successor      the instance the holder handed the lease to (leasehold
                 handoff, or a preferred candidate), which takes it at
                 once; the others wait for it as held
  version        the store's version of the record (an ETag); every write,
                 every renewal, changes it
  changed        whether the record changed during the watch (json: changed)
  unchanged for  how long it was seen unchanged: the whole watch, or 0 if it
                 changed or was read once (json: unchanged_for, _ms)
  meaning        the same in a sentence
  member N       on a quorum (quorum: URLs), one row per member: held or
                 released by whom, with its own token and the quorum token
                 its record carries, never written, or unreachable and why
                 (json: members: member, state, holder, token, quorum_token,
                 error); the quorum's holder is the one that holds a
                 majority

With --shards N, --lease is the prefix of a group (leasehold run --shards):
it lists the members and reads each one's liveness record and
acknowledgement and the assignment, and prints (json keys in brackets):
  shards         the group's N [shards], the assignment's generation [gen],
                 whether it is a new assigner's fence [fence], the group's
                 TTL and renew interval [ttl, renew_interval]
  balanced       every shard owned by a live member, none moving, each live
                 member owning N/M rounded down or up [balanced]; a member
                 starts a shard given to it at its next read of the
                 assignment, within a renew interval
  member         one line per member [members]: its identity, its liveness
                 token, its state, and its shards with their epochs
                 [shards: shard, epoch] and those it is releasing
                 [releasing]. An epoch is the LEASEHOLD_TOKEN of the
                 shard's command, except for shards that kept running
                 across a new assigner's fence, which gives every shard
                 its own epoch: those [fenced] show the fence's epoch,
                 and their commands have an earlier, lower token (the
                 instance's /shards shows it)
  ended          how many members ended and own nothing, not listed: they
                 left (released their liveness record), or the assigner
                 judged their liveness expired; their records stay [ended]
  unowned        how many shards nobody owns [unowned: the shards]
  meaning        the same in a sentence, and whether N differs from --shards
With --holders N, the group is one of leasehold run --holders N, whose
shards are slots: the same, with "slots" for "shards" and "free" for
"unowned" in text [max_per_worker: 1]; balanced means that min(N, M) live
members hold a slot each (the others wait, or slots stay free).
A member's state: one read cannot tell a crashed member, whose liveness
record stays held, from a live one. Read once (or watched for less than the
TTL) a member is "not judged" [live: true, judged: false], and balanced
counts it as live, until the assigner judges its liveness expired, about a
TTL after its last renewal, and says so in the store: it then ends. With
--watch of at least the TTL [judged: true], a member whose record did not
change is lapsed [lapsed], not live, and one whose record changed is live.

Exit status: 0 when the lease could be read (whatever its state), 64 bad
flags, 69 store unreachable within --start-timeout, 78 unusable lease URL,
or a group whose N is not --shards (or --holders), or that is a group of
the other kind (after the report).
`, wrap("With --watch, it watches the lease that long, reading it twice per renew interval of its holder (a leader renews every "+shares.renewInterval+" of the TTL or so), until a read shows a change. On "+
		storeNames(lease.JudgedByContender)+" every renewal changes the record's version, so a record that did not change for the TTL belongs to a leader that is gone: it says so (lapsed) only when a contender would take the lease over, in an unbroken run of reads, each within the holder's renew interval of the one before. A read that fails or comes late restarts the count, as a renewal could hide in the gap (a restore from a backup brings an old version back). ("+
		storeNames(lease.JudgedByStore)+" judges its leases itself: there a lapsed lease reads as released, and a held one is live.)", "", 75))
	f.usage(w, commonDefaults)
}

func printCheckHelp(w io.Writer, f *flagSet) {
	fmt.Fprintf(w, `Usage: leasehold check --lease URL [--ttl DURATION] [-o json]

Checks, before you deploy, that the lease can be used safely, with the
credentials, URL and TTL the instances will have. One line per check, with
its verdict: ok, fail, or skip and the reason.

%s  credentials         where the credentials come from (AWS: the default
                      chain's source; Azure: the connection string's key or
                      SAS, or an Entra ID token; Cloud Storage: Application
                      Default Credentials, none for an emulator), or that
                      none were found and where leasehold looked
  store               the bucket, table or container is there (DynamoDB:
                      with the lease's key schema, and not an eventually
                      consistent global table), and the lease can be read:
                      never acquired, held by whom, or released
%s  permissions         read, and write: a free lease (never acquired, or
                      released) is acquired and released at once as
                      --identity, which is harmless, as tokens only go up; a
                      held lease is never written: write is not tested, and
                      the holder is named
  cost                the leader's and each follower's requests per hour
                      and their monthly cost at list prices, at this TTL
                      and the defaults of leasehold run (renew every %s of
                      the TTL; a follower reads just after each renewal and
                      once between, five times on Azure; there a renewal is
                      two requests, the lease's renewal and the metadata
                      write that shows it)

On a quorum (quorum: URLs) every member is checked, each check named after
its member ("member 2 store"), and the cost is the members' added up: n
times a lease's.

Exit status:
  0   every check passed or was skipped: the lease can be used as checked
  64  bad flags, environment variables or arguments
  69  the store could not be reached within --start-timeout
  78  a check failed for a reason a person must fix: a TTL the store
      refuses, no or refused credentials, a missing bucket, table or
      container, a store that does not enforce conditional writes, writes
      refused; also an unusable lease URL
  On failure, one line on stderr names the first failed check and why.

-o json prints {"lease", "ok", "checks": [{"check", "verdict", "detail"}]},
the cost check with "cost": {"service", "leader_request",
"follower_request", "leader_requests_per_hour", "follower_requests_per_hour",
"leader_dollars_per_month", "follower_dollars_per_month"}.
`, ttlHelp(), conditionsHelp(), shares.renewInterval)
	f.usage(w, commonDefaults)
}

func printBreakHelp(w io.Writer, f *flagSet) {
	fmt.Fprintf(w, `Usage: leasehold break --lease URL [--force] [-o json]

Frees a lease whose holder will never come back (a crashed or
decommissioned fleet; an infinite Azure lease, infinite_lease=true), so
that the next contender takes it at once, without ever lowering the
fencing counter: the lease is marked released with its holder's token, and
the next leader's token is greater than every earlier one.

First it judges, as leasehold status --watch does, whether the holder is
alive, as a contender would before taking the lease over:
%s  - Azure: the store judges. A held blob lease is live (Azure ends a dead
    holder's lease within its TTL by itself, except an infinite lease),
    also one that no leasehold record names (another tool's): break says
    so, and what --force would break.
  A lease that is free (never acquired, or released) is left alone.
It breaks only the record it judged: if the lease changes in between (the
holder renews it), it is not broken.

It refuses to break a live holder's lease unless --force is given. With
--force it breaks it at once, and the deposed holder loses the lease at its
next renewal (within %s of its TTL at the defaults) and stops:
leasehold run kills its command at once, as for any lost lease. Until that
renewal it may still act as leader: the systems it writes to must fence it
by its token (refuse a token lower than the greatest they have seen). The
record is marked broken, which the next term sees: on a shard group's
assigner lease, the next assigner waits for the deposed one's shards to
stop before it gives them out.

Fields: those of leasehold status, as the lease was found, then
  broken         whether this command broke it
  next token     the token the next contender's acquisition gets (json:
                 next_token)
  verdict        what was done and why, and what follows

Exit status: 0 when the lease was broken, or was free already; 75 refused:
the holder is alive (or renewed the lease while it was being broken, or
was not seen unchanged in an unbroken run of reads), and --force was not
given; 64 bad flags, 69 store unreachable within
--start-timeout, 78 unusable lease URL.
`, bullet(storeNames(lease.JudgedByContender)+": it watches the record for the holder's TTL, reading it twice per renew interval of the holder. A record that changed was renewed: the holder is alive. A record that did not change, in an unbroken run of reads each within the holder's renew interval of the one before, belongs to a holder that is gone: the lease is broken. A read that failed or came late breaks the run, as a renewal could hide in the gap (a restore from a backup brings an old version back): break then refuses, and can be run again."), shares.renewInterval)
	f.usage(w, commonDefaults)
}

func printVersionHelp(w io.Writer) {
	fmt.Fprint(w, `Usage: leasehold version   (or leasehold --version)

Prints where this binary came from:
  version   the release's version (v1.2.3) for a release binary or image;
            the tag for go install ...@v1.2.3; a pseudo-version or (devel)
            for a build from a checkout
  commit    the commit it was built from, "(modified)" when the checkout
            had changes; unknown when the build did not record it
            (go install ...@version, -buildvcs=false)
  date      the commit's time, when recorded
  go        the Go version it was built with
  platform  GOOS/GOARCH
leasehold run also logs the version and commit when it starts, and serves
them as the labels of leasehold_build_info on /metrics.
`)
}

func merge(maps ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range maps {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}
