// Command benchtable turns the output of keepwatch's benchmarks (go test
// -bench, on standard input) into tables with koanf's stock provider and
// keepwatch side by side. With -count above 1, each figure is the median
// of the runs, with their spread (min–max). `make bench` pipes the
// benchmarks into it.
//
// The first table is BenchmarkLatency's: per scenario, the time from an
// update to the callback's entry and to the config loaded in it, at p50
// and p99, for both providers, measured side by side in each run; the
// ratio keepwatch/stock is taken run by run (both sides of a ratio come
// from the same run) and its median shown, and "runs won" counts the runs
// in which each side had the lower figure. The second table lists what
// each provider missed. The third holds every other benchmark.
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

func main() {
	r, err := parse(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchtable:", err)
		os.Exit(1)
	}
	writeLatency(os.Stdout, r)
	write(os.Stdout, r)
}

// run is one result line: each metric's value, and "N", the iterations.
type run map[string]float64

// runs holds every run of every benchmark, by name without the
// benchmark prefix and the GOMAXPROCS suffix: "Latency/kubelet",
// "Idle/keepwatch/files=100".
type runs map[string][]run

var line = regexp.MustCompile(`^Benchmark(\S+?)(?:-\d+)?\s+(\d+)\s+(.*)$`)

func parse(r io.Reader) (runs, error) {
	out := make(runs)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		m := line.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		n, _ := strconv.ParseFloat(m[2], 64)
		one := run{"N": n}
		f := strings.Fields(m[3])
		for i := 0; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				continue
			}
			one[f[i+1]] = v
		}
		out[m[1]] = append(out[m[1]], one)
	}
	return out, sc.Err()
}

// name joins the parts of a benchmark's name, leaving out empty ones.
func name(parts ...string) string {
	return strings.Join(slices.DeleteFunc(parts, func(s string) bool { return s == "" }), "/")
}

// values returns a metric's value in every run that has it.
func (r runs) values(bench, metric string) []float64 {
	var vs []float64
	for _, one := range r[bench] {
		if v, ok := one[metric]; ok {
			vs = append(vs, v)
		}
	}
	return vs
}

// stats is the median and the spread of some values.
type stats struct {
	median, lo, hi float64
	n              int
}

func summarize(vs []float64) (stats, bool) {
	if len(vs) == 0 {
		return stats{}, false
	}
	vs = slices.Sorted(slices.Values(vs))
	med := vs[len(vs)/2]
	if len(vs)%2 == 0 {
		med = (vs[len(vs)/2-1] + vs[len(vs)/2]) / 2
	}
	return stats{med, vs[0], vs[len(vs)-1], len(vs)}, true
}

// get returns the median of a metric over the runs, and whether it was
// measured.
func (r runs) get(bench, metric string) (stats, bool) {
	return summarize(r.values(bench, metric))
}

// format prints a median with its spread when there is one: "0.131 ms
// (0.120–0.150)".
func (s stats) format(f func(float64) string, unit string) string {
	out := f(s.median) + unit
	if s.n > 1 && s.lo != s.hi {
		out += " (" + f(s.lo) + "–" + f(s.hi) + ")"
	}
	return out
}

// num prints a figure with three significant digits at most.
func num(v float64) string {
	switch {
	case v == 0:
		return "0"
	case v >= 100 || v <= -100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 10 || v <= -10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case v >= 1 || v <= -1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	return strconv.FormatFloat(v, 'g', 2, 64)
}

// integer prints a count; a median of an even number of runs can be a
// half.
func integer(v float64) string {
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// ms prints a latency in milliseconds with three significant digits,
// keeping the zeros that say so: 0.130, 1.01, 12.3.
func ms(v float64) string {
	a := v
	if a < 0 {
		a = -a
	}
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
	case a >= 0.01:
		return strconv.FormatFloat(v, 'f', 4, 64)
	}
	return strconv.FormatFloat(v, 'g', 2, 64)
}

// The scenarios of BenchmarkLatency, in its order, and their labels.
var scenarios = []struct{ name, label string }{
	{"kubelet", "kubelet `..data` swap"},
	{"rename", "rename-over save"},
	{"inplace", "in-place write (from its close)"},
}

var figures = []struct{ metric, label string }{
	{"entry-p50-ms", "→ callback entry, p50"},
	{"entry-p99-ms", "→ callback entry, p99"},
	{"loaded-p50-ms", "→ config loaded, p50"},
	{"loaded-p99-ms", "→ config loaded, p99"},
}

const (
	stock     = "stock"
	keepwatch = "keepwatch"
)

// writeLatency writes BenchmarkLatency's tables, if it ran.
func writeLatency(w io.Writer, r runs) {
	var measured []string
	for _, sc := range scenarios {
		if len(r[name("Latency", sc.name)]) > 0 {
			measured = append(measured, sc.name)
		}
	}
	if len(measured) == 0 {
		return
	}
	first := r[name("Latency", measured[0])]
	fmt.Fprintf(w, "Latency, stock and keepwatch interleaved in each run: %s updates each per scenario per run, %s.\n\n",
		integer(first[len(first)-1]["N"]), plural(len(first), "run", "medians of %d runs (min–max)"))
	fmt.Fprintln(w, "| update | figure | koanf providers/file v1.2.1 | keepwatch | keepwatch / stock | runs won |")
	fmt.Fprintln(w, "| --- | --- | --- | --- | --- | --- |")
	for _, sc := range scenarios {
		bench := name("Latency", sc.name)
		if len(r[bench]) == 0 {
			continue
		}
		for i, fig := range figures {
			label := sc.label
			if i > 0 {
				label = ""
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s |\n", label, fig.label,
				latencyCell(r, bench, stock+"-"+fig.metric), latencyCell(r, bench, keepwatch+"-"+fig.metric),
				ratio(r, bench, fig.metric), wins(r, bench, fig.metric))
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| update | provider | updates missed | watch ended, restarted | callbacks with incomplete content | callbacks entered before the writer's close returned (timed as 0) |")
	fmt.Fprintln(w, "| --- | --- | --- | --- | --- | --- |")
	for _, sc := range scenarios {
		bench := name("Latency", sc.name)
		if len(r[bench]) == 0 {
			continue
		}
		for i, p := range []string{stock, keepwatch} {
			label := sc.label
			if i > 0 {
				label = ""
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s |\n", label, p, missed(r, bench, p),
				count(r, bench, p+"-restarts"), count(r, bench, p+"-partial"), count(r, bench, p+"-early"))
		}
	}
	fmt.Fprintln(w)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "one " + one
	}
	return fmt.Sprintf(many, n)
}

func latencyCell(r runs, bench, metric string) string {
	s, ok := r.get(bench, metric)
	if !ok {
		return "-"
	}
	return s.format(ms, " ms")
}

func count(r runs, bench, metric string) string {
	s, ok := r.get(bench, metric)
	if !ok {
		return "-"
	}
	return s.format(integer, "")
}

func missed(r runs, bench, provider string) string {
	s, ok := r.get(bench, provider+"-missed")
	if !ok {
		return "-"
	}
	n, _ := r.get(bench, "N")
	return s.format(integer, "") + " of " + integer(n.median)
}

// ratio is keepwatch's figure over the stock provider's, run by run:
// the median of the runs' ratios, and their spread. A run in which the
// stock provider's figure is 0 (an in-place write delivered before its
// close returned) has no ratio.
func ratio(r runs, bench, metric string) string {
	var ratios []float64
	for _, one := range r[bench] {
		kw, ok1 := one[keepwatch+"-"+metric]
		st, ok2 := one[stock+"-"+metric]
		if ok1 && ok2 && st > 0 {
			ratios = append(ratios, kw/st)
		}
	}
	s, ok := summarize(ratios)
	if !ok {
		return "-"
	}
	return s.format(func(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }, "×")
}

// wins counts the runs in which each side had the lower figure.
func wins(r runs, bench, metric string) string {
	var st, kw, tie int
	for _, one := range r[bench] {
		k, ok1 := one[keepwatch+"-"+metric]
		s, ok2 := one[stock+"-"+metric]
		switch {
		case !ok1 || !ok2:
		case k < s:
			kw++
		case s < k:
			st++
		default:
			tie++
		}
	}
	if st+kw+tie == 0 {
		return "-"
	}
	out := fmt.Sprintf("stock %d, keepwatch %d", st, kw)
	if tie > 0 {
		out += fmt.Sprintf(", tied %d", tie)
	}
	return out
}

type row struct {
	label, group, variant string
	cell                  func(r runs, bench string) string
	target                string
}

// latency is the cell of a benchmark that reports p50-ms, p99-ms and
// missed-% (measure in bench_test.go).
func latency(r runs, bench string) string {
	p50, ok := r.get(bench, "p50-ms")
	if !ok {
		if len(r[bench]) > 0 {
			return "never delivered"
		}
		return "-"
	}
	p99, _ := r.get(bench, "p99-ms")
	s := fmt.Sprintf("%s / %s ms", p50.format(num, ""), p99.format(num, ""))
	var notes []string
	if missed, _ := r.get(bench, "missed-%"); missed.median > 0 {
		notes = append(notes, fmt.Sprintf("%s%% of updates missed", num(missed.median)))
	}
	if restarts, _ := r.get(bench, "restarts"); restarts.median > 0 {
		notes = append(notes, fmt.Sprintf("its watch ended %.0f× and was restarted", restarts.median))
	}
	if len(notes) > 0 {
		s += " (" + strings.Join(notes, "; ") + ")"
	}
	return s
}

func metric(name, unit string) func(r runs, bench string) string {
	return func(r runs, bench string) string {
		v, ok := r.get(bench, name)
		if !ok {
			return "-"
		}
		return v.format(num, unit)
	}
}

var rows = []row{
	{"ancestor directory renamed, another put in its place → callback, p50 / p99", "Reach", "ancestor-rename", latency, ""},
	{"ancestor directories exchanged (RENAME_EXCHANGE) → callback, p50 / p99", "Reach", "ancestor-exchange", latency, ""},
	{"write through a hard link elsewhere → callback, p50 / p99", "Reach", "hardlink-write", latency, ""},
	{"injected watcher failure → delivery of an update made meanwhile, p50 / p99", "Recovery", "", latency, "under 100 ms"},
	{"idle CPU per second (over one 31 s re-check round), 1 file", "Idle", "files=1", metric("cpu-µs/s", " µs"), "≈ 0"},
	{"idle CPU per second, 100 files", "Idle", "files=100", metric("cpu-µs/s", " µs"), "≈ 0"},
	{"idle CPU per second, 10,000 files", "Idle", "files=10000", metric("cpu-µs/s", " µs"), "≈ 0"},
	{"idle CPU per second, 10,000 files, re-check off", "Idle", "files=10000,recheck=off", metric("cpu-µs/s", " µs"), ""},
	{"idle allocations, 10,000 files", "Idle", "files=10000", metric("allocs/s", " /s"), ""},
	{"heap per watched file, 100 files", "Footprint", "files=100", metric("heap-B/file", " B"), ""},
	{"heap per watched file, 10,000 files", "Footprint", "files=10000", metric("heap-B/file", " B"), "≤ 16 KiB"},
	{"goroutines per watched file, 10,000 files", "Footprint", "files=10000", metric("goroutines/file", ""), "≤ 1 beyond shared"},
	{"goroutines per watched file, 100 files", "Footprint", "files=100", metric("goroutines/file", ""), ""},
	{"inotify instances per watched file, 100 files", "Footprint", "files=100", metric("inotify/file", ""), ""},
	{"inotify instances per watched file, 10,000 files", "Footprint", "files=10000", metric("inotify/file", ""), "one per process"},
	{"kernel watches per watched file, 100 files", "Footprint", "files=100", metric("watches/file", ""), ""},
	{"kernel watches per watched file, 10,000 files", "Footprint", "files=10000", metric("watches/file", ""), ""},
	{"one idle re-check (a stat and a compare)", "RecheckCost", "", metric("ns/op", " ns"), ""},
}

// write writes the table of every other benchmark, if any of them ran.
func write(w io.Writer, r runs) {
	ran := slices.ContainsFunc(rows, func(row row) bool {
		return len(r[name(row.group, keepwatch, row.variant)]) > 0 || len(r[row.group]) > 0
	})
	if !ran {
		return
	}
	fmt.Fprintln(w, "| figure | keepwatch | koanf providers/file v1.2.1 | target |")
	fmt.Fprintln(w, "| --- | --- | --- | --- |")
	for _, row := range rows {
		kw := row.cell(r, name(row.group, keepwatch, row.variant))
		if row.group == "RecheckCost" {
			kw = row.cell(r, row.group)
		}
		koanf := row.cell(r, name(row.group, "koanf", row.variant))
		switch {
		case row.group == "Recovery":
			koanf = "never: its watch ends on the first error"
		case koanf == "-" && strings.HasPrefix(row.variant, "files=10000"):
			koanf = "cannot: fails at 128 (an inotify instance each)"
		case row.group == "RecheckCost":
			koanf = "no re-check"
		case row.group == "Reach":
			koanf = "never: it watches the file's directory only"
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s |\n", row.label, kw, koanf, row.target)
	}
}
