package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// opensMeasurements holds the opens part's runs, by mode and condition,
// in the order of the repetitions.
type opensMeasurements struct {
	opts  writersOptions
	modes []mode
	conds []contender
	runs  map[cell][]opensRun // cell{mode's name, condition's label}
}

// print writes a table for each mode, then issue 42's targets.
func (m *opensMeasurements) print(w io.Writer) {
	for _, md := range m.modes {
		fmt.Fprintf(w, "A writer's open(2), %d rewrites in place, %s: medians of %d runs (min–max)\n\n", m.opts.rewrites, md.name, m.opts.reps)
		fmt.Fprintf(w, "| watching | open p50 | open p99 | open max | callbacks, each run | watcher CPU, each run |\n| --- | --- | --- | --- | --- | --- |\n")
		for _, c := range m.conds {
			runs := m.runs[cell{md.name, c.label}]
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s |\n", c.label,
				microsOf(runs, func(r rewriteStats) time.Duration { return r.P50 }),
				microsOf(runs, func(r rewriteStats) time.Duration { return r.P99 }),
				microsOf(runs, func(r rewriteStats) time.Duration { return r.Max }),
				eachRun(runs, c, func(r opensRun) string { return fmt.Sprint(r.watch.Callbacks) }),
				eachRun(runs, c, func(r opensRun) string { return millis(r.watch.CPU) }))
		}
		fmt.Fprintln(w)
	}
	m.printTargets(w)
}

// microsOf summarizes one figure of the runs' writers, in µs.
func microsOf(runs []opensRun, figure func(rewriteStats) time.Duration) string {
	var values []float64
	for _, r := range runs {
		values = append(values, float64(figure(r.writer))/float64(time.Microsecond))
	}
	median, spread, _ := strings.Cut(summarize(values), " ")
	return median + " µs " + spread
}

func eachRun(runs []opensRun, c contender, f func(opensRun) string) string {
	if c.watcher == watcherNone {
		return "–"
	}
	var s []string
	for _, r := range runs {
		s = append(s, f(r))
	}
	return strings.Join(s, ", ")
}

// printTargets sets each keepwatch tree against issue 42's: p99 no more
// than twice the same writer's with nothing watching (each ratio of two
// runs of the same repetition), and max no more than 5 ms in any run.
func (m *opensMeasurements) printTargets(w io.Writer) {
	fmt.Fprintf(w, "Issue 42's targets: p99 / nothing watching's p99 of the same repetition, median (min–max); max, worst run\n\n")
	fmt.Fprintf(w, "| watching | mode | p99 / nothing watching's (≤ 2) | max, worst run (≤ 5 ms) |\n| --- | --- | --- | --- |\n")
	for _, c := range m.conds {
		if c.watcher == watcherNone {
			continue
		}
		for _, md := range m.modes {
			runs, none := m.runs[cell{md.name, c.label}], m.runs[cell{md.name, m.conds[0].label}]
			var ratios []float64
			var worst time.Duration
			for i, r := range runs {
				if i < len(none) {
					ratios = append(ratios, float64(r.writer.P99)/float64(none[i].writer.P99))
				}
				worst = max(worst, r.writer.Max)
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s |\n", c.label, md.name, summarize(ratios), millis(worst))
		}
	}
	fmt.Fprintln(w)
}

// printStopped writes the stopped part's runs, then each tree's totals.
func printStopped(w io.Writer, o writersOptions, conds []contender, runs []stoppedRun) {
	slow := millis(o.slow)
	fmt.Fprintf(w, "keepwatch watching, or a process watching nothing, while a writer rewrites the file in place all the time, %v after each close; the watching process stopped (SIGSTOP) %d times a run for %v, at random moments %v to %v apart (seed %d); /proc/locks read every 5 ms of each stop for a lease on the file\n\n",
		o.rewrite, o.stops, o.stop, o.gap/10, o.gap, o.seed)
	fmt.Fprintf(w, "| run | watching | opens timed | opens > %s | longest open | stops that caught a lease (seen BREAKING) |\n| --- | --- | --- | --- | --- | --- |\n", slow)
	for _, r := range runs {
		fmt.Fprintf(w, "| %d | %s | %d | %d | %s | %d of %d (%d) |\n", r.run, r.label, r.writer.Opens, r.writer.Slow, millis(r.writer.Max), r.caught, r.stops, r.breaking)
	}
	fmt.Fprintf(w, "\n| watching | runs | opens timed | opens > %s | runs with one | longest open | stops that caught a lease (BREAKING) | runs with one |\n| --- | --- | --- | --- | --- | --- | --- | --- |\n", slow)
	for _, c := range conds {
		var t stoppedTotals
		for _, r := range runs {
			if r.label == c.label {
				t.add(r)
			}
		}
		fmt.Fprintf(w, "| %s | %d | %d | %d | %d | %s | %d of %d (%d) | %d |\n", c.label, t.runs, t.opens, t.slow, t.runsSlow, millis(t.longest), t.caught, t.stops, t.breaking, t.runsCaught)
	}
	fmt.Fprintf(w, "\nIssue 42's target: no open waits more than 10 ms.\n")
}

// stoppedTotals adds up one tree's stopped runs.
type stoppedTotals struct {
	runs, opens, slow, runsSlow         int
	stops, caught, breaking, runsCaught int
	longest                             time.Duration
}

func (t *stoppedTotals) add(r stoppedRun) {
	t.runs++
	t.opens += r.writer.Opens
	t.slow += r.writer.Slow
	t.stops += r.stops
	t.caught += r.caught
	t.breaking += r.breaking
	t.longest = max(t.longest, r.writer.Max)
	if r.writer.Slow > 0 {
		t.runsSlow++
	}
	if r.caught > 0 {
		t.runsCaught++
	}
}

// The states of a lease held, as /proc/locks names them, weakest first.
const (
	leaseActive   = "ACTIVE"
	leaseBreaking = "BREAKING" // a writer's open waits for its holder
)

// leaseOn is the state of a lease held on the file id (major:minor:inode,
// as lockID gives it) in locks, the text of /proc/locks: "" for none. A
// line such as "1: LEASE  BREAKING  READ 10975 00:1b:6 0 EOF"; the lines
// of those who wait ("1: -> LEASE ...") are no lease held.
func leaseOn(locks, id string) string {
	var state string
	for line := range strings.Lines(locks) {
		f := strings.Fields(line)
		if len(f) >= 6 && f[1] == "LEASE" && f[5] == id {
			state = stronger(state, f[2])
		}
	}
	return state
}

// stronger is the stronger of two lease states; a state that is neither
// of a lease held counts for none.
func stronger(a, b string) string {
	rank := func(s string) int { return slices.Index([]string{leaseActive, leaseBreaking}, s) }
	if rank(b) > rank(a) {
		return b
	}
	return a
}

// statState is the state letter of a process in the text of its
// /proc/pid/stat, "pid (comm) S ...", whose comm may hold anything.
func statState(stat string) byte {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 || i+2 >= len(stat) {
		return 0
	}
	return stat[i+2]
}

// millis prints a duration in milliseconds.
func millis(d time.Duration) string {
	return threeDigits(float64(d)/float64(time.Millisecond)) + " ms"
}
