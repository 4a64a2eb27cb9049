package shard

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/leasehold/leasehold/lease/memlease"
	"github.com/leasehold/leasehold/runner"
)

// The shards page's picture of a join and a crash, owners over time.
const (
	timelineShards = 8
	timelineTTL    = 15 * time.Second
	timelineCell   = timelineTTL / 10 // one column
	timelineJoin   = 10               // the column at which e joins
	timelineCrash  = 30               // the column at which b is killed
	timelineCells  = 60
	// timelineOffset is how far into its column an event happens: not on
	// an instant at which the workers' timers fire, whose order on the
	// fake clock varies, so that every run prints the same chart.
	timelineOffset = 7 * time.Millisecond
)

// timeline runs 4 workers (a to d) over 8 shards on memlease, on a fake
// clock; from the instant all 8 run, it joins a fifth (e) at 1 TTL and
// kills b as kill -9 would (its calls hang, its shards' functions end at
// once) at 3 TTL, and returns the chart of who ran each shard, a column
// per tenth of the TTL (sampled mid-column), '.' where nobody did.
func timeline(t *testing.T) string {
	var chart string
	synctest.Test(t, func(t *testing.T) {
		store := memlease.NewStore()
		var mu sync.Mutex
		running := map[int]string{}
		crashed := map[string]bool{}
		var full time.Time // when all shards first ran
		var wg sync.WaitGroup
		stop := map[string]context.CancelFunc{}
		start := func(id string) {
			ctx, cancel := context.WithCancel(t.Context())
			stop[id] = cancel
			w, err := New(Config{
				Store: store.Objects(id), Group: "timeline", Shards: timelineShards, Identity: id, TTL: timelineTTL,
				NoAssigner: id != "a", Logger: simLogger(),
				Rand: runner.LockedSource(rand.NewPCG(1, uint64(id[0]))),
				Run: func(ctx context.Context, s Shard) error {
					mu.Lock()
					if other, ok := running[s.Index]; ok {
						t.Errorf("%s started shard %d while %s ran it", id, s.Index, other)
					}
					running[s.Index] = id
					if len(running) == timelineShards && full.IsZero() {
						full = time.Now()
					}
					mu.Unlock()
					<-ctx.Done()
					mu.Lock()
					dead := crashed[id]
					mu.Unlock()
					if !dead {
						time.Sleep(timelineTTL * 3 / 80) // a tenth of a renew interval to stop
					}
					mu.Lock()
					if running[s.Index] == id {
						delete(running, s.Index)
					}
					mu.Unlock()
					return nil
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			wg.Go(func() { _ = w.Run(ctx) })
		}
		// One after another, so that a, the only candidate, is the
		// assigner and the run is the same every time.
		for _, id := range []string{"a", "b", "c", "d"} {
			start(id)
			time.Sleep(time.Millisecond)
		}
		// The chart starts when the group first runs every shard: the
		// assigner's first campaign is jittered, so the start varies.
		var began time.Time
		for began.IsZero() {
			time.Sleep(timelineCell / 16)
			mu.Lock()
			began = full
			mu.Unlock()
		}
		rows := make([][]byte, timelineShards)
		for col := range timelineCells {
			time.Sleep(time.Until(began.Add(time.Duration(col)*timelineCell + timelineOffset)))
			switch col {
			case timelineJoin:
				start("e")
			case timelineCrash:
				mu.Lock()
				crashed["b"] = true
				for s, id := range running {
					if id == "b" {
						delete(running, s)
					}
				}
				mu.Unlock()
				store.Hang("b")
				stop["b"]()
			}
			time.Sleep(time.Until(began.Add(time.Duration(col)*timelineCell + timelineCell/2)))
			mu.Lock()
			for s := range rows {
				owner := "."
				if id, ok := running[s]; ok {
					owner = id
				}
				rows[s] = append(rows[s], owner[0])
			}
			mu.Unlock()
		}
		for _, cancel := range stop {
			cancel()
		}
		wg.Wait()

		var b strings.Builder
		header := "TTLs      "
		for col := 0; col < timelineCells; col += 10 {
			header += fmt.Sprintf("%-10d", col/10)
		}
		b.WriteString(strings.TrimRight(header, " ") + "\n")
		for s, row := range rows {
			fmt.Fprintf(&b, "shard %d   %s\n", s, row)
		}
		marks := []byte(strings.Repeat(" ", 10+timelineCells))
		marks[10+timelineJoin], marks[10+timelineCrash] = '^', '^'
		labels := slices.Clone(marks)
		copy(labels[10+timelineJoin:], "e joins")
		copy(labels[10+timelineCrash:], "b: kill -9")
		fmt.Fprintf(&b, "%s\n%s\n", strings.TrimRight(string(marks), " "), strings.TrimRight(string(labels), " "))
		chart = b.String()
	})
	return chart
}

// TestShardsPageTimeline: the picture of a join and a crash on the shards
// page (docs/shards.md) is what timeline prints (go test ./shard -run
// TestShardsPageTimeline -v), so that the
// picture follows the code. The run checks what the picture shows: a
// worker stops a shard before another starts it.
func TestShardsPageTimeline(t *testing.T) {
	chart := timeline(t)
	t.Logf("\n%s", chart)
	const page = "../docs/shards.md"
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	const open = "    $ go test ./shard -run TestShardsPageTimeline -v\n"
	_, block, ok := strings.Cut(string(b), open)
	if !ok {
		t.Fatalf("%s does not show %q", page, open)
	}
	var want strings.Builder
	for _, line := range strings.SplitAfter(strings.TrimSuffix(chart, "\n"), "\n") {
		want.WriteString(strings.TrimRight("    "+line, " \n") + "\n")
	}
	// The block ends with the chart: a blank line follows it.
	if !strings.HasPrefix(block, want.String()+"\n") {
		t.Errorf("%s's picture after %q differs from what timeline prints; want:\n%s", page, open, want.String())
	}
}
