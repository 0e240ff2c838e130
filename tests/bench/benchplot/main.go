// Command benchplot draws the latency distributions that BenchmarkLatency
// measured (its -latency.samples file) as an SVG: per scenario and figure,
// the cumulative distribution of koanf's stock provider against
// keepwatch's, on a log time axis, with p50 and p99 marked. It uses the
// standard library only. `make bench` runs it into docs/bench-latency.svg:
//
//	go run ./cmd/benchplot -in bench-samples.out -out docs/bench-latency.svg
//
// The testing package runs each benchmark once with b.N = 1 before its
// measured runs; of each scenario, only the runs with the largest b.N are
// drawn, pooled.
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
)

func main() {
	in := flag.String("in", "bench-samples.out", "the samples BenchmarkLatency wrote (-latency.samples)")
	out := flag.String("out", "docs/bench-latency.svg", "the SVG to write")
	note := flag.String("note", "", "a line under the title: the machine, say")
	flag.Parse()
	if err := run(*in, *out, *note); err != nil {
		fmt.Fprintln(os.Stderr, "benchplot:", err)
		os.Exit(1)
	}
}

func run(in, out, note string) error {
	f, err := os.Open(in)
	if err != nil {
		return err
	}
	defer f.Close()
	d, err := parse(f)
	if err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	var buf bytes.Buffer
	draw(&buf, d, note)
	return os.WriteFile(out, buf.Bytes(), 0o644)
}

// The scenarios, figures and providers, in the order they are drawn.
var (
	scenarios = []struct{ name, label string }{
		{"kubelet", "kubelet ..data swap"},
		{"rename", "rename-over save"},
		{"inplace", "in-place write (from its close)"},
	}
	figures = []struct{ label string }{
		{"update → callback entry"},
		{"update → config loaded (a fresh k.Load done in the callback)"},
	}
	// The stock provider's curve is wider, drawn first: where the two
	// coincide, it shows around keepwatch's.
	providers = []struct {
		name, label, color string
		width              float64
	}{
		{"stock", "koanf providers/file v1.2.1 (stock)", "#d55e00", 3.5},
		{"keepwatch", "keepwatch", "#0060c0", 1.6},
	}
)

// side is what one provider delivered in one scenario: per figure, the
// latencies in milliseconds, and the updates it missed.
type side struct {
	figs   [2][]float64
	missed int
}

// data holds every scenario's sides, and how the samples were taken.
type data struct {
	sides   map[string]map[string]*side // scenario, provider
	runs    map[string]int              // scenario: runs drawn
	updates map[string]int              // scenario: updates per provider per run
}

var errNoSamples = errors.New("no latency samples")

// parse reads lines of
//
//	<scenario> <run> <b.N> <provider> <entry ns> <loaded ns>
//	<scenario> <run> <b.N> <provider> missed
func parse(r io.Reader) (data, error) {
	type sample struct {
		scenario, provider string
		run, n             int
		entry, loaded      float64
		missed             bool
	}
	var all []sample
	maxN := map[string]int{}
	sc := bufio.NewScanner(r)
	for lineNo := 1; sc.Scan(); lineNo++ {
		f := strings.Fields(sc.Text())
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		bad := fmt.Errorf("line %d: not <scenario> <run> <b.N> <provider> <entry ns> <loaded ns>, or missed", lineNo)
		if len(f) != 5 && len(f) != 6 {
			return data{}, bad
		}
		s := sample{scenario: f[0], provider: f[3], missed: len(f) == 5}
		var err1, err2, err3, err4 error
		s.run, err1 = strconv.Atoi(f[1])
		s.n, err2 = strconv.Atoi(f[2])
		if s.missed {
			if f[4] != "missed" {
				return data{}, bad
			}
		} else {
			s.entry, err3 = strconv.ParseFloat(f[4], 64)
			s.loaded, err4 = strconv.ParseFloat(f[5], 64)
		}
		if err := errors.Join(err1, err2, err3, err4); err != nil {
			return data{}, bad
		}
		all = append(all, s)
		maxN[s.scenario] = max(maxN[s.scenario], s.n)
	}
	if err := sc.Err(); err != nil {
		return data{}, err
	}
	if len(all) == 0 {
		return data{}, errNoSamples
	}
	d := data{sides: map[string]map[string]*side{}, runs: map[string]int{}, updates: maxN}
	seen := map[string]map[int]bool{}
	for _, s := range all {
		if s.n != maxN[s.scenario] {
			continue // the testing package's first, one-update run
		}
		if d.sides[s.scenario] == nil {
			d.sides[s.scenario] = map[string]*side{}
			seen[s.scenario] = map[int]bool{}
		}
		if !seen[s.scenario][s.run] {
			seen[s.scenario][s.run] = true
			d.runs[s.scenario]++
		}
		sd := d.sides[s.scenario][s.provider]
		if sd == nil {
			sd = &side{}
			d.sides[s.scenario][s.provider] = sd
		}
		if s.missed {
			sd.missed++
			continue
		}
		sd.figs[0] = append(sd.figs[0], s.entry/1e6)
		sd.figs[1] = append(sd.figs[1], s.loaded/1e6)
	}
	for _, sides := range d.sides {
		for _, sd := range sides {
			slices.Sort(sd.figs[0])
			slices.Sort(sd.figs[1])
		}
	}
	return d, nil
}

// percentile returns the nearest-rank percentile p (0 < p ≤ 1) of sorted,
// as BenchmarkLatency computes it.
func percentile(sorted []float64, p float64) float64 {
	i := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// xRange returns the decades that the time axis spans: from below the
// first percentile of every curve, but not below minX, to above every
// sample. Smaller values, and values at or below zero (an in-place write
// delivered before its close returned), are drawn at the left edge.
func xRange(d data) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, sides := range d.sides {
		for _, sd := range sides {
			for _, fig := range sd.figs {
				var pos []float64
				for _, v := range fig {
					if v > 0 {
						pos = append(pos, v)
					}
				}
				if len(pos) == 0 {
					continue
				}
				lo = min(lo, percentile(pos, 0.01))
				hi = max(hi, pos[len(pos)-1])
			}
		}
	}
	if math.IsInf(lo, 0) {
		return 0.01, 1
	}
	lo = math.Pow(10, math.Floor(math.Log10(max(lo, minX))))
	hi = math.Pow(10, math.Ceil(math.Log10(hi)))
	if hi <= lo {
		hi = lo * 10
	}
	return lo, hi
}

// minX is where the time axis starts at the lowest, in milliseconds:
// nothing in a delivery takes less than a few microseconds.
const minX = 0.01

// The page's geometry, in pixels.
const (
	width     = 1100
	margin    = 24
	panelW    = (width - 2*margin) / 3
	panelH    = 298
	padLeft   = 44 // y tick labels
	padRight  = 22
	padTop    = 24 // the panel's title
	padBottom = 86 // x tick labels, the axis title and the figures
	plotW     = panelW - padLeft - padRight
	plotH     = panelH - padTop - padBottom
	bandH     = 26 // a row's label
	font      = `font-family="Helvetica, Arial, sans-serif"`
)

// draw writes the SVG.
func draw(w *bytes.Buffer, d data, note string) {
	lo, hi := xRange(d)
	var head bytes.Buffer
	headerH := header(&head, d, note)
	height := headerH + 2*(bandH+panelH) + 8
	fmt.Fprintf(w, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" %s font-size="12">`+"\n",
		width, height, width, height, font)
	fmt.Fprintf(w, `<rect width="%d" height="%d" fill="#ffffff"/>`+"\n", width, height)
	w.Write(head.Bytes())
	for fi, fig := range figures {
		top := headerH + fi*(bandH+panelH)
		fmt.Fprintf(w, `<text x="%d" y="%d" font-size="14" font-weight="bold" fill="#222">%s</text>`+"\n",
			margin, top+18, esc(fig.label))
		for si, sc := range scenarios {
			panel(w, d, sc.name, sc.label, fi, margin+si*panelW, top+bandH, lo, hi)
		}
	}
	w.WriteString("</svg>\n")
}

// header writes the title, the notes and the legend, and returns their
// height.
func header(w *bytes.Buffer, d data, note string) int {
	fmt.Fprintf(w, `<text x="%d" y="28" font-size="18" font-weight="bold" fill="#222">Config update latency: koanf's stock file provider against keepwatch</text>`+"\n", margin)
	var how []string
	for _, sc := range scenarios {
		if d.runs[sc.name] > 0 {
			how = append(how, fmt.Sprintf("%s %d × %d", sc.name, d.runs[sc.name], d.updates[sc.name]))
		}
	}
	lines := []string{
		"Cumulative share of the delivered updates (y) within a time from the update (x, milliseconds, log scale); a 1 KiB YAML file.",
		"Both providers interleaved, update by update, in each run; runs × updates per provider, pooled: " + strings.Join(how, ", ") + ".",
		"Updates missed are left out of the curves and counted below them; an in-place write delivered before the writer's close returned is timed as 0, at the left edge.",
	}
	if note != "" {
		lines = append(lines, note)
	}
	for i, l := range lines {
		fmt.Fprintf(w, `<text x="%d" y="%d" fill="#444">%s</text>`+"\n", margin, 50+16*i, esc(l))
	}
	y := 50 + 16*len(lines) + 12
	x := margin
	for _, p := range providers {
		fmt.Fprintf(w, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="%.1f"/>`+"\n", x, y-4, x+28, y-4, p.color, p.width)
		fmt.Fprintf(w, `<text x="%d" y="%d" fill="#222">%s</text>`+"\n", x+34, y, esc(p.label))
		x += 34 + 7*len(p.label) + 30
	}
	fmt.Fprintf(w, `<circle cx="%d" cy="%d" r="3.5" fill="#666"/><text x="%d" y="%d" fill="#222">p50</text>`+"\n", x+4, y-4, x+12, y)
	fmt.Fprintf(w, `<rect x="%d" y="%d" width="7" height="7" fill="#666"/><text x="%d" y="%d" fill="#222">p99</text>`+"\n", x+50, y-8, x+62, y)
	return y + 14
}

// panel draws one scenario's figure fi at (left, top).
func panel(w *bytes.Buffer, d data, scenario, label string, fi, left, top int, lo, hi float64) {
	px, py := float64(left+padLeft), float64(top+padTop)
	xOf := func(v float64) float64 {
		v = min(max(v, lo), hi)
		return px + plotW*(math.Log10(v)-math.Log10(lo))/(math.Log10(hi)-math.Log10(lo))
	}
	yOf := func(f float64) float64 { return py + plotH*(1-f) }
	clip := fmt.Sprintf("clip-%s-%d", scenario, fi)

	fmt.Fprintf(w, `<g><text x="%.0f" y="%d" font-size="13" font-weight="bold" fill="#222">%s</text>`+"\n", px, top+16, esc(label))
	fmt.Fprintf(w, `<clipPath id="%s"><rect x="%.1f" y="%.1f" width="%d" height="%d"/></clipPath>`+"\n", clip, px, py-2, plotW, plotH+4)
	// The grid: decades and their 2..9, and every 25 %.
	for k := math.Round(math.Log10(lo)); k <= math.Round(math.Log10(hi)); k++ {
		dec := math.Pow(10, k)
		for m := 1; m <= 9; m++ {
			v := dec * float64(m)
			if v > hi*1.001 {
				break
			}
			x := xOf(v)
			stroke := "#eeeeee"
			if m == 1 {
				stroke = "#cccccc"
				fmt.Fprintf(w, `<text x="%.1f" y="%.1f" text-anchor="middle" fill="#444">%s</text>`+"\n", x, py+plotH+15, tick(v))
			}
			fmt.Fprintf(w, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s"/>`+"\n", x, py, x, py+plotH, stroke)
		}
	}
	for _, f := range []float64{0, 0.25, 0.5, 0.75, 1} {
		y := yOf(f)
		fmt.Fprintf(w, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#cccccc"/>`+"\n", px, y, px+plotW, y)
		fmt.Fprintf(w, `<text x="%.1f" y="%.1f" text-anchor="end" fill="#444">%.0f%%</text>`+"\n", px-5, y+4, f*100)
	}
	fmt.Fprintf(w, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#999999" stroke-dasharray="3,3"/>`+"\n", px, yOf(0.99), px+plotW, yOf(0.99))
	fmt.Fprintf(w, `<text x="%.1f" y="%.1f" text-anchor="middle" fill="#444">ms (log scale)</text>`+"\n", px+plotW/2, py+plotH+31)

	sides := d.sides[scenario]
	if len(sides) == 0 {
		fmt.Fprintf(w, `<text x="%.1f" y="%.1f" text-anchor="middle" fill="#888">not measured</text></g>`+"\n", px+plotW/2, py+plotH/2)
		return
	}
	// The curves, then the percentile marks over them.
	for _, p := range providers {
		if sd := sides[p.name]; sd != nil && len(sd.figs[fi]) > 0 {
			fmt.Fprintf(w, `<polyline clip-path="url(#%s)" fill="none" stroke="%s" stroke-width="%.1f" stroke-linejoin="round" points="%s"/>`+"\n",
				clip, p.color, p.width, curve(sd.figs[fi], xOf, yOf, px+plotW))
		}
	}
	// The percentiles, marked on the curves and written under the axis.
	var early []string
	for i, p := range providers {
		sd := sides[p.name]
		if sd == nil || len(sd.figs[fi]) == 0 {
			continue
		}
		// A delivery before the writer's close returned is timed as 0, as
		// BenchmarkLatency does.
		p50, p99 := max(0, percentile(sd.figs[fi], 0.50)), max(0, percentile(sd.figs[fi], 0.99))
		fmt.Fprintf(w, `<circle cx="%.1f" cy="%.1f" r="3.5" fill="%s" stroke="#fff"/>`+"\n", xOf(p50), yOf(0.50), p.color)
		fmt.Fprintf(w, `<rect x="%.1f" y="%.1f" width="7" height="7" fill="%s" stroke="#fff"/>`+"\n", xOf(p99)-3.5, yOf(0.99)-3.5, p.color)
		text := fmt.Sprintf("%s: p50 %s, p99 %s ms", p.name, ms(p50), ms(p99))
		if sd.missed > 0 {
			text += fmt.Sprintf("; %d of %d missed", sd.missed, sd.missed+len(sd.figs[fi]))
		}
		fmt.Fprintf(w, `<text x="%.1f" y="%.1f" font-size="11.5" fill="%s">%s</text>`+"\n",
			px-padLeft+8, py+plotH+50+float64(i)*15, p.color, esc(text))
		if n := countAtMost(sd.figs[fi], lo); n > 0 {
			early = append(early, fmt.Sprintf("%s %d", p.name, n))
		}
	}
	if len(early) > 0 {
		fmt.Fprintf(w, `<text x="%.1f" y="%.1f" font-size="11.5" fill="#444">at most %s ms, at the left edge: %s</text>`+"\n",
			px-padLeft+8, py+plotH+50+float64(len(providers))*15, tick(lo), esc(strings.Join(early, ", ")))
	}
	w.WriteString("</g>\n")
}

// curve returns the points of a step CDF of sorted, one vertical step per
// pixel column at most, ending at right.
func curve(sorted []float64, xOf, yOf func(float64) float64, right float64) string {
	var sb strings.Builder
	n := float64(len(sorted))
	pt := func(x, y float64) { fmt.Fprintf(&sb, "%.1f,%.1f ", x, y) }
	lastX := xOf(sorted[0])
	pt(lastX, yOf(0))
	for i := 0; i < len(sorted); i++ {
		x := xOf(sorted[i])
		// Every sample in this pixel column makes one step.
		j := i
		for j+1 < len(sorted) && xOf(sorted[j+1])-x < 0.5 {
			j++
		}
		if x != lastX {
			pt(x, yOf(float64(i)/n))
		}
		pt(x, yOf(float64(j+1)/n))
		lastX, i = x, j
	}
	pt(right, yOf(1))
	return strings.TrimSpace(sb.String())
}

func countAtMost(sorted []float64, v float64) int {
	i, _ := slices.BinarySearch(sorted, math.Nextafter(v, math.Inf(1)))
	return i
}

// tick labels a decade of milliseconds: 0.01, 0.1, 1, 10, 100.
func tick(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// ms prints a latency in milliseconds with three significant digits.
func ms(v float64) string {
	a := math.Abs(v)
	switch {
	case a == 0:
		return "0"
	case a >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case a >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	case a >= 0.1:
		return strconv.FormatFloat(v, 'f', 3, 64)
	}
	return strconv.FormatFloat(v, 'f', 4, 64)
}

var esc = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace
