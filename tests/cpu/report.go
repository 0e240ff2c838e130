package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"
)

// measurements holds every run's results, by load and contender, in the
// order of the repetitions.
type measurements struct {
	opts       cpuOptions
	contenders []contender
	runs       map[cell][]runResult
}

type cell struct{ load, label string }

func newMeasurements(opts cpuOptions, contenders []contender) *measurements {
	return &measurements{opts: opts, contenders: contenders, runs: map[cell][]runResult{}}
}

func (m *measurements) add(load, label string, r runResult) {
	m.runs[cell{load, label}] = append(m.runs[cell{load, label}], r)
}

// ofLoad gathers f of every run under load, whoever watched.
func (m *measurements) ofLoad(load string, f func(runResult) float64) []float64 {
	var values []float64
	for _, c := range m.contenders {
		for _, r := range m.runs[cell{load, c.label}] {
			values = append(values, f(r))
		}
	}
	return values
}

// printSetting says what is measured, where and when: the figures mean
// little without the machine and what else it was doing.
func printSetting(w io.Writer, opts cpuOptions, trees []tree) {
	fmt.Fprintf(w, "CPU per minute of a process watching a config that nothing touches, while another process works near it.\n")
	fmt.Fprintf(w, "%s, %s, %d CPUs, Linux %s, load average at start %s\n", time.Now().Format("2006-01-02 15:04"), runtime.Version(), runtime.NumCPU(), firstLine("/proc/sys/kernel/osrelease"), loadAverage())
	fmt.Fprintf(w, "getrusage(RUSAGE_SELF) of the watching process over %v (token: %v) after %v to settle; %d repetitions, the watchers taking turns; run directories in %s\n", opts.window, opts.tokenWindow, opts.settle, opts.reps, opts.base)
	for _, t := range trees {
		fmt.Fprintf(w, "keepwatch %s: %s\n", t.label, t.dir)
	}
	fmt.Fprintln(w)
}

func firstLine(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "?"
	}
	line, _, _ := strings.Cut(string(b), "\n")
	return line
}

// loadAverage is the machine's load average over 1, 5 and 15 minutes:
// how much else was running.
func loadAverage() string {
	fields := strings.Fields(firstLine("/proc/loadavg"))
	return strings.Join(fields[:min(3, len(fields))], " ")
}

// print writes the table, the loads as they were, and the targets.
func (m *measurements) print(w io.Writer) {
	fmt.Fprintf(w, "| load | watcher | CPU ms/min, each run | min–max | callbacks, each run |\n| --- | --- | --- | --- | --- |\n")
	for _, load := range m.opts.loads {
		for _, c := range m.contenders {
			m.printRow(w, load, c)
		}
	}
	fmt.Fprintf(w, "\nThe bare inotify readers' callbacks are the events they read. Load average at the end %s\n\n", loadAverage())
	m.printLoads(w)
	m.printBackground(w)
	m.printTargets(w)
}

func (m *measurements) printRow(w io.Writer, load string, c contender) {
	runs := m.runs[cell{load, c.label}]
	if len(runs) == 0 {
		return
	}
	var cpu, calls []string
	var values []float64
	for _, run := range runs {
		r := run.watch
		values = append(values, r.perMinute())
		cpu = append(cpu, threeDigits(r.perMinute()))
		call := fmt.Sprint(r.Callbacks)
		if r.Errors > 0 {
			call += fmt.Sprintf(" (%d errors)", r.Errors)
		}
		calls = append(calls, call)
	}
	fmt.Fprintf(w, "| %s | %s | %s | %s–%s | %s |\n", load, c.label, strings.Join(cpu, ", "),
		threeDigits(slices.Min(values)), threeDigits(slices.Max(values)), strings.Join(calls, ", "))
}

// printLoads shows that each load did what it says, at the rate it says.
func (m *measurements) printLoads(w io.Writer) {
	units := map[string]string{loadLog: "appends/s", loadChurn: "creates+deletes/s", loadTrickle: "creates+deletes/s", loadToken: "rotations/s"}
	for _, load := range m.opts.loads {
		if load == loadIdle {
			continue
		}
		rates := m.ofLoad(load, func(r runResult) float64 { return r.load.perSecond() })
		fmt.Fprintf(w, "load %s: %s–%s %s\n", load, threeDigits(slices.Min(rates)), threeDigits(slices.Max(rates)), units[load])
	}
	fmt.Fprintln(w)
}

// printBackground shows how busy others were near the runs: a run with
// much of it is suspect.
func (m *measurements) printBackground(w io.Writer) {
	fmt.Fprintf(w, "Others' activity that keepwatch sees too, during each run, by load: events in %s and the directories above it; changes of the mount table\n", m.opts.base)
	for _, load := range m.opts.loads {
		events := m.ofLoad(load, func(r runResult) float64 { return float64(r.background) })
		mounts := m.ofLoad(load, func(r runResult) float64 { return float64(r.mounts) })
		fmt.Fprintf(w, "- %s: %.0f–%.0f events; %.0f–%.0f mount table changes\n", load, slices.Min(events), slices.Max(events), slices.Min(mounts), slices.Max(mounts))
	}
	fmt.Fprintln(w)
}

// printTargets sets each keepwatch tree against issue 38's targets,
// repetition by repetition: each ratio is of two runs of the same turn.
func (m *measurements) printTargets(w io.Writer) {
	if !slices.ContainsFunc(m.opts.loads, func(l string) bool { return l != loadTrickle }) {
		return
	}
	fmt.Fprintf(w, "Issue 38's targets, median of the repetitions (min–max), each of two runs of the same repetition:\n\n")
	fmt.Fprintf(w, "| keepwatch | log: keepwatch / stock (≤ 0.1) | churn: keepwatch − stock, ms/min (≤ 2) | token: keepwatch / bare inotify (≤ 2) | idle: keepwatch, stock ms/min (no worse) |\n| --- | --- | --- | --- | --- |\n")
	for _, c := range m.contenders {
		if c.watcher != watcherKeepwatch {
			continue
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s, %s |\n", c.label,
			m.paired(loadLog, c.label, "koanf stock", ratio),
			m.paired(loadChurn, c.label, "koanf stock", difference),
			m.paired(loadToken, c.label, "bare inotify", ratio),
			m.summary(loadIdle, c.label), m.summary(loadIdle, "koanf stock"))
	}
}

func ratio(a, b float64) float64      { return a / b }
func difference(a, b float64) float64 { return a - b }

// paired combines label's and other's runs under load repetition by
// repetition, and summarizes what it gets.
func (m *measurements) paired(load, label, other string, combine func(a, b float64) float64) string {
	a, b := m.runs[cell{load, label}], m.runs[cell{load, other}]
	var values []float64
	for i := range min(len(a), len(b)) {
		values = append(values, combine(a[i].watch.perMinute(), b[i].watch.perMinute()))
	}
	return summarize(values)
}

func (m *measurements) summary(load, label string) string {
	var values []float64
	for _, r := range m.runs[cell{load, label}] {
		values = append(values, r.watch.perMinute())
	}
	return summarize(values)
}

// summarize is the median of values and their range.
func summarize(values []float64) string {
	if len(values) == 0 {
		return "–"
	}
	s := slices.Sorted(slices.Values(values))
	median := s[len(s)/2]
	if len(s)%2 == 0 {
		median = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return fmt.Sprintf("%s (%s–%s)", threeDigits(median), threeDigits(s[0]), threeDigits(s[len(s)-1]))
}

// threeDigits prints a figure with three significant digits or so.
func threeDigits(v float64) string {
	switch a := max(v, -v); {
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	case a >= 1:
		return fmt.Sprintf("%.2f", v)
	}
	return fmt.Sprintf("%.3f", v)
}
