// Command benchtable turns the output of keepwatch's benchmarks (go test
// -bench, on standard input) into a table with keepwatch and koanf's stock
// provider side by side. With -count above 1, each figure is the median of
// the runs. `make bench` pipes the benchmarks into it.
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
	runs, err := parse(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchtable:", err)
		os.Exit(1)
	}
	write(os.Stdout, runs)
}

// key names one benchmark: its group (SwapLatency), provider and variant
// (files=100, or "").
type key struct{ group, provider, variant string }

// runs holds, per benchmark, every value of every metric.
type runs map[key]map[string][]float64

var line = regexp.MustCompile(`^Benchmark([^/\s]+?)(?:/([^/\s]+?))?(?:/(\S+?))?(?:-\d+)?\s+\d+\s+(.*)$`)

func parse(r io.Reader) (runs, error) {
	out := make(runs)
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		m := line.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		k := key{m[1], m[2], m[3]}
		if out[k] == nil {
			out[k] = make(map[string][]float64)
		}
		f := strings.Fields(m[4])
		for i := 0; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				continue
			}
			out[k][f[i+1]] = append(out[k][f[i+1]], v)
		}
	}
	return out, sc.Err()
}

// get returns the median of a metric, and whether it was measured.
func (r runs) get(k key, metric string) (float64, bool) {
	vs := slices.Clone(r[k][metric])
	if len(vs) == 0 {
		return 0, false
	}
	slices.Sort(vs)
	return vs[len(vs)/2], true
}

type row struct {
	label, group, variant string
	cell                  func(r runs, k key) string
	target                string
}

func latency(r runs, k key) string {
	p50, ok := r.get(k, "p50-ms")
	if !ok {
		if _, measured := r[k]; measured {
			return "never delivered"
		}
		return "-"
	}
	p99, _ := r.get(k, "p99-ms")
	s := fmt.Sprintf("%s / %s ms", num(p50), num(p99))
	var notes []string
	if missed, _ := r.get(k, "missed-%"); missed > 0 {
		notes = append(notes, fmt.Sprintf("%s%% of updates missed", num(missed)))
	}
	if restarts, _ := r.get(k, "restarts"); restarts > 0 {
		notes = append(notes, fmt.Sprintf("its watch ended %.0f× and was restarted", restarts))
	}
	if len(notes) > 0 {
		s += " (" + strings.Join(notes, "; ") + ")"
	}
	return s
}

func metric(name, unit string) func(r runs, k key) string {
	return func(r runs, k key) string {
		v, ok := r.get(k, name)
		if !ok {
			return "-"
		}
		return num(v) + unit
	}
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

var rows = []row{
	{"kubelet `..data` swap → callback, p50 / p99", "SwapLatency", "", latency, "within 1.5× of koanf"},
	{"rename-over save → callback, p50 / p99", "RenameLatency", "", latency, ""},
	{"end of an in-place write → callback, p50 / p99", "InPlaceLatency", "", latency, "milliseconds (the writer's close)"},
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
	{"one idle re-check (a stat)", "RecheckCost", "", metric("ns/op", " ns"), ""},
}

func write(w io.Writer, r runs) {
	fmt.Fprintln(w, "| figure | keepwatch | koanf providers/file v1.2.1 | target |")
	fmt.Fprintln(w, "| --- | --- | --- | --- |")
	for _, row := range rows {
		kw := row.cell(r, key{row.group, "keepwatch", row.variant})
		if row.group == "RecheckCost" {
			kw = row.cell(r, key{row.group, "", ""})
		}
		koanf := row.cell(r, key{row.group, "koanf", row.variant})
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
