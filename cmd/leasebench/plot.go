package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// `leasebench plot` draws the figures of docs/benchmarks.md from the -data
// files of earlier runs, without measuring anything.

// plotMain runs `leasebench plot`: it reads every -data file (*.json) in
// -dir and writes the figures there as SVG.
func plotMain(args []string) error {
	fs := flag.NewFlagSet("leasebench plot", flag.ExitOnError)
	dir := fs.String("dir", "docs/figures", "directory of the runs' -data files (*.json), where the figures (*.svg) are written")
	_ = fs.Parse(args) // ExitOnError: it exits on an error
	if fs.NArg() > 0 {
		return fmt.Errorf("plot: unexpected argument %q (flags: -dir)", fs.Arg(0))
	}
	figs, err := plotDir(*dir)
	if err != nil {
		return err
	}
	for _, f := range figs {
		if err := os.WriteFile(filepath.Join(*dir, f.name), f.svg, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// figure is one drawn figure: its file name and its SVG.
type figure struct {
	name string
	svg  []byte
}

// plotDir draws the figures from the -data files in dir.
func plotDir(dir string) ([]figure, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("plot: no -data files (*.json) in %s", dir)
	}
	var s samples
	for _, p := range paths {
		d, err := readRunData(p)
		if err != nil {
			return nil, fmt.Errorf("plot: %w", err)
		}
		if err := s.add(p, d); err != nil {
			return nil, fmt.Errorf("plot: %w", err)
		}
	}
	return s.figures()
}

// samples are the runs' samples, merged: each store, peer and fleet from
// one run only.
type samples struct {
	leases     []leaseData
	shards     []shardData
	from       map[string]string // the file each one came from, by key
	leaseDates []string          // the days of the runs of leases and shards
	shardDates []string
}

func (s *samples) add(path string, d *runData) error {
	if s.from == nil {
		s.from = map[string]string{}
	}
	claim := func(key string) error {
		if prev, ok := s.from[key]; ok {
			return fmt.Errorf("%s: %s is also in %s: keep one run of it", path, key, prev)
		}
		s.from[key] = path
		return nil
	}
	day := d.Date[:len("2006-01-02")]
	for _, l := range d.Leases {
		if err := claim(l.key()); err != nil {
			return err
		}
		s.leases = append(s.leases, l)
		s.leaseDates = appendNew(s.leaseDates, day)
	}
	for _, r := range d.Shards {
		if err := claim(fmt.Sprintf("%s, %d shards", r.series(), r.Shards)); err != nil {
			return err
		}
		s.shards = append(s.shards, r)
		s.shardDates = appendNew(s.shardDates, day)
	}
	return nil
}

func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

// key names a store, or a peer at its setting, among the runs.
func (l leaseData) key() string {
	if !l.Peer {
		return l.Name
	}
	return l.Name + " (" + l.Setting + ")"
}

// label names a store, or a peer with its setting's first words
// ("dynamolock never gives up"), on a figure's axis.
func (l leaseData) label() string {
	if !l.Peer {
		return fmt.Sprintf("%s\nTTL %v", l.Name, time.Duration(l.TTL))
	}
	setting, _, _ := strings.Cut(l.Setting, ",")
	return l.Name + "\n" + setting
}

func (r shardData) id() fleetID { return fleetID{r.Store, r.Fleet, r.Shards} }

// series names a fleet's line: its store and kind.
func (r shardData) series() string { return r.Store + ", " + fleetName(r.Fleet) }

// figures draws every figure; each needs samples.
func (s *samples) figures() ([]figure, error) {
	if len(s.leases) == 0 {
		return nil, errors.New("plot: no run of the lease scenarios among the -data files (leasebench -data FILE)")
	}
	if len(s.shards) == 0 {
		return nil, errors.New("plot: no run of the shard scenarios among the -data files (leasebench -shards N,… -data FILE)")
	}
	// Stores in the tables' order, then the peers as measured.
	slices.SortStableFunc(s.leases, func(a, b leaseData) int {
		rank := func(l leaseData) int {
			if l.Peer {
				return len(storeNames)
			}
			return slices.Index(storeNames, l.Name)
		}
		return rank(a) - rank(b)
	})
	slices.SortStableFunc(s.shards, func(a, b shardData) int { return a.id().compare(b.id()) })
	slices.Sort(s.leaseDates)
	slices.Sort(s.shardDates)
	leaseRuns := "leasebench " + strings.Join(s.leaseDates, ", ")
	shardRuns := "leasebench -shards " + strings.Join(s.shardDates, ", ")
	failover := boxes(s.leases, []boxSeries{
		{"follower warmed", color.RGBA{R: 0x9e, G: 0xc5, B: 0xe8, A: 0xff}, func(l leaseData) []dur { return l.Warmed }},
		{"follower just started", color.RGBA{R: 0xf6, G: 0xc1, B: 0x8b, A: 0xff}, func(l leaseData) []dur { return l.JustStarted }},
	})
	oneTTL(failover)
	var figs []figure
	for _, f := range []struct {
		name, title string
		plots       [][]*plot.Plot
		w, h        vg.Length
	}{
		{"failover.svg", "Crash failover ÷ TTL, box plots (" + leaseRuns + ")", [][]*plot.Plot{{failover}}, 9 * vg.Inch, 4 * vg.Inch},
		{"handover.svg", "Graceful handover ÷ TTL, box plots (" + leaseRuns + ")", [][]*plot.Plot{{boxes(s.leases, []boxSeries{
			{"handover", color.RGBA{R: 0xb8, G: 0xe0, B: 0xb0, A: 0xff}, func(l leaseData) []dur { return l.Handover }},
		})}}, 9 * vg.Inch, 4 * vg.Inch},
		{"shards.svg", "Shard groups: time ÷ TTL, median and min–max (" + shardRuns + ")", shardTimes(s.shards), 9 * vg.Inch, 7 * vg.Inch},
		{"requests.svg", "Requests per worker per hour at TTL 15s (" + shardRuns + ")", [][]*plot.Plot{{shardRequests(s.shards)}}, 7 * vg.Inch, 4.5 * vg.Inch},
	} {
		b, err := render(f.title, f.plots, f.w, f.h)
		if err != nil {
			return nil, fmt.Errorf("plot: %s: %w", f.name, err)
		}
		figs = append(figs, figure{f.name, b})
	}
	return figs, nil
}

// render draws title over plots, in rows and columns, as one SVG of w × h.
func render(title string, plots [][]*plot.Plot, w, h vg.Length) ([]byte, error) {
	c := vgsvg.New(w, h)
	dc := draw.New(c)
	sty := plot.New().Title.TextStyle
	sty.XAlign, sty.YAlign = draw.XCenter, draw.YTop
	pad := 2 * vg.Millimeter
	dc.FillText(sty, vg.Point{X: w / 2, Y: h - pad}, title)
	tiles := draw.Tiles{Rows: len(plots), Cols: len(plots[0]), PadX: vg.Centimeter, PadY: vg.Centimeter,
		PadTop: 2*pad + sty.Height(title), PadBottom: pad, PadLeft: pad, PadRight: pad}
	canvases := plot.Align(plots, tiles, dc)
	for i, row := range plots {
		for j, p := range row {
			p.Draw(canvases[i][j])
		}
	}
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// boxSeries is one distribution drawn for each store and peer.
type boxSeries struct {
	name    string
	fill    color.Color
	samples func(leaseData) []dur
}

// boxes draws, for each of leases, a box plot of each series' samples ÷
// its TTL, side by side, with the legend top left: the peers, on the
// right, take longest.
func boxes(leases []leaseData, series []boxSeries) *plot.Plot {
	p := newPlot("")
	p.Y.Label.Text = "÷ TTL"
	const width = vg.Length(18)
	var names []string
	for i, l := range leases {
		names = append(names, l.label())
		for k, s := range series {
			ds := s.samples(l)
			if len(ds) == 0 {
				continue
			}
			vs := make(plotter.Values, len(ds))
			for j, d := range ds {
				vs[j] = float64(d) / float64(l.TTL)
			}
			b, err := plotter.NewBoxPlot(width, float64(i), vs)
			if err != nil {
				panic(err) // NewBoxPlot fails only on a negative width
			}
			b.Offset = (vg.Length(k) - vg.Length(len(series)-1)/2) * width
			b.FillColor = s.fill
			p.Add(b)
		}
	}
	for _, s := range series {
		p.Legend.Add(s.name, swatch{s.fill})
	}
	p.Legend.Top, p.Legend.Left = true, true
	p.Y.Max += (p.Y.Max - p.Y.Min) / 4
	p.NominalX(names...)
	p.X.Min, p.X.Max = -0.5, float64(len(names))-0.5
	return p
}

// oneTTL draws a dashed line across p at one TTL, the wait before a
// takeover that no failover can beat.
func oneTTL(p *plot.Plot) {
	l, err := plotter.NewLine(plotter.XYs{{X: p.X.Min, Y: 1}, {X: p.X.Max, Y: 1}})
	if err != nil {
		panic(err) // the points are finite
	}
	l.Dashes = plotutil.Dashes(2)
	l.Color = color.Gray{Y: 0x60}
	p.Add(l)
	p.Legend.Add("one TTL, the wait before a takeover", l)
}

// swatch is a legend's thumbnail of a box's fill.
type swatch struct{ fill color.Color }

func (s swatch) Thumbnail(c *draw.Canvas) {
	c.SetColor(s.fill)
	c.Fill(c.Rectangle.Path())
}

func newPlot(title string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Add(plotter.NewGrid())
	return p
}

// logLog makes p's axes logarithmic, its x the number of shards, and widens
// its ranges so that a flat line and the legend have room; a plot with
// nothing drawn on it (no fleet ran its event) stays linear.
func logLog(p *plot.Plot) {
	p.X.Label.Text = "shards"
	if p.X.Min > p.X.Max {
		return
	}
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = logTicks{}, logTicks{}
	p.X.Min, p.X.Max = p.X.Min/1.5, p.X.Max*1.5
	p.Y.Min, p.Y.Max = p.Y.Min/1.5, p.Y.Max*4
	p.Legend.Top, p.Legend.Left = true, true
}

// logTicks marks a log axis at 1, 2 and 5 times each power of ten, with
// labels, and at the other multiples without: plot.LogTicks labels only the
// powers, too few on a range within one decade or two.
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	var ticks []plot.Tick
	for e := int(math.Floor(math.Log10(lo))); math.Pow10(e) <= hi; e++ {
		for i := 1.0; i < 10; i++ {
			v := i * math.Pow10(e)
			if v < lo || v > hi {
				continue
			}
			t := plot.Tick{Value: v}
			if i == 1 || i == 2 || i == 5 {
				t.Label = strconv.FormatFloat(v, 'f', -1, 64)
			}
			ticks = append(ticks, t)
		}
	}
	return ticks
}

// fleetLine draws one fleet's points on p, in its store's colour, dashed
// for the baseline, and names it in the legend if legend is set.
func fleetLine(p *plot.Plot, r shardData, pts plotter.XYs, legend bool) {
	line, points, err := plotter.NewLinePoints(pts)
	if err != nil {
		panic(err) // the points are finite: durations and counts
	}
	c := plotutil.Color(slices.Index(storeNames, r.Store))
	line.Color, points.Color = c, c
	if r.Fleet == kclFleet {
		line.Dashes = plotutil.Dashes(1)
		points.Shape = draw.BoxGlyph{}
	} else {
		points.Shape = draw.CircleGlyph{}
	}
	p.Add(line, points)
	if legend {
		p.Legend.Add(r.series(), line, points)
	}
}

// eachFleet calls f with each fleet's runs, in order of shards.
func eachFleet(shards []shardData, f func(runs []shardData)) {
	for i := 0; i < len(shards); {
		j := i + 1
		for j < len(shards) && shards[j].series() == shards[i].series() {
			j++
		}
		f(shards[i:j])
		i = j
	}
}

// shardTimes draws, per event, each fleet's median time to balance ÷ TTL
// against its number of shards, with bars from the fastest trial to the
// slowest.
func shardTimes(shards []shardData) [][]*plot.Plot {
	titles := map[string]string{
		"join":           "a worker joins → balanced",
		"leave":          "the same worker leaves → its shards running",
		scenarioCrash:    "a worker crashes → its shards running",
		scenarioAssigner: "the assigner crashes → its shards running",
	}
	var panels []*plot.Plot
	for k, event := range shardEvents {
		p := newPlot(titles[event])
		p.Y.Label.Text = "÷ TTL"
		eachFleet(shards, func(fleet []shardData) {
			var pts plotter.XYs
			var bars plotter.YErrors
			for _, r := range fleet {
				ts := r.Times[event]
				if len(ts) == 0 {
					continue
				}
				ratio := func(d time.Duration) float64 { return float64(d) / float64(r.TTL) }
				ds := make([]time.Duration, len(ts))
				for i, t := range ts {
					ds[i] = time.Duration(t)
				}
				med := ratio(quantile(ds, 0.5))
				pts = append(pts, plotter.XY{X: float64(r.Shards), Y: med})
				bars = append(bars, struct{ Low, High float64 }{med - ratio(slices.Min(ds)), ratio(slices.Max(ds)) - med})
			}
			if len(pts) == 0 {
				return
			}
			fleetLine(p, fleet[0], pts, k == 0)
			eb, err := plotter.NewYErrorBars(struct {
				plotter.XYs
				plotter.YErrors
			}{pts, bars})
			if err != nil {
				panic(err) // the bars are finite
			}
			eb.Color = plotutil.Color(slices.Index(storeNames, fleet[0].Store))
			p.Add(eb)
		})
		logLog(p)
		panels = append(panels, p)
	}
	return [][]*plot.Plot{panels[:2], panels[2:]}
}

// shardRequests draws each fleet's requests per worker per hour (at TTL
// 15s) against its number of shards.
func shardRequests(shards []shardData) *plot.Plot {
	p := newPlot("")
	p.Y.Label.Text = "requests/h"
	eachFleet(shards, func(fleet []shardData) {
		var pts plotter.XYs
		for _, r := range fleet {
			if r.PerWorker == nil {
				continue
			}
			pts = append(pts, plotter.XY{X: float64(r.Shards), Y: total(r.PerWorker)})
		}
		if len(pts) > 0 {
			fleetLine(p, fleet[0], pts, true)
		}
	})
	logLog(p)
	return p
}
