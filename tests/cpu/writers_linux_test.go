package main

import (
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/knadh/koanf/parsers/yaml"
)

func TestOpenSummary(t *testing.T) {
	var opens []time.Duration
	for i := 100; i >= 1; i-- { // in any order
		opens = append(opens, time.Duration(i)*time.Millisecond)
	}
	s := openSummary(opens, 90*time.Millisecond)
	want := rewriteStats{Opens: 100, P50: 51 * time.Millisecond, P99: 100 * time.Millisecond, Max: 100 * time.Millisecond, Slow: 10}
	if s != want {
		t.Errorf("got %+v, want %+v", s, want)
	}
	if s := openSummary([]time.Duration{time.Second}, time.Second); s.P50 != time.Second || s.P99 != time.Second || s.Slow != 0 {
		t.Errorf("one open: %+v", s)
	}
	if s := openSummary(nil, time.Second); s != (rewriteStats{}) {
		t.Errorf("none: %+v", s)
	}
}

func TestLeaseOn(t *testing.T) {
	const locks = `1: POSIX  ADVISORY  WRITE 812 00:1b:6 0 EOF
2: LEASE  ACTIVE    READ 10975 00:1b:7 0 EOF
3: LEASE  BREAKING  READ 10976 00:1b:6 0 EOF
3: -> LEASE  BREAKER   READ 10977 00:1b:6 0 EOF
4: LEASE  ACTIVE    READ 10978 00:1b:6 0 EOF
`
	for _, c := range []struct{ id, want string }{
		{"00:1b:6", leaseBreaking},
		{"00:1b:7", leaseActive},
		{"00:1b:8", ""},
		{"00:1c:6", ""},
	} {
		if got := leaseOn(locks, c.id); got != c.want {
			t.Errorf("%s: %q, want %q", c.id, got, c.want)
		}
	}
	if got := leaseOn("1: FLOCK  ADVISORY  WRITE 1 00:1b:6 0 EOF\n", "00:1b:6"); got != "" {
		t.Errorf("a flock is no lease: %q", got)
	}
}

func TestStatState(t *testing.T) {
	for stat, want := range map[string]byte{
		"123 (cpu) T 1 123":         'T',
		"123 (a) b) (c) S 1 123":    'S',
		"123 (keepwatch-cpu) R 1 1": 'R',
		"123 (cpu)":                 0,
	} {
		if got := statState(stat); got != want {
			t.Errorf("%q: %q, want %q", stat, got, want)
		}
	}
}

// The writer's config is YAML of the size asked, its generation stamped
// anew each time.
func TestConfigOfSize(t *testing.T) {
	b := configOfSize(4096, 7)
	if len(b) != 4096 {
		t.Fatalf("%d bytes", len(b))
	}
	stamp(b, 1_000_000_042)
	m, err := yaml.Parser().Unmarshal(b)
	if err != nil {
		t.Fatal(err)
	}
	if m["gen"] != 42 || len(m["pad"].(string)) < 4000 {
		t.Errorf("gen %v, pad of %d bytes", m["gen"], len(m["pad"].(string)))
	}
}

// TestWritersParts runs each part once, briefly: the writer's opens under
// each watcher, and a run of stops; no child is left behind, none stopped.
func TestWritersParts(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	opts := writersOptions{dir: t.TempDir(), size: 64 << 10, reps: 1, rewrites: 20, pause: time.Millisecond, settle: 100 * time.Millisecond,
		runs: 1, stops: 2, stop: 100 * time.Millisecond, gap: 50 * time.Millisecond, rewrite: time.Millisecond, slow: 10 * time.Millisecond, reload: true}
	g := newGuard()
	b := writersBench{opts: opts, self: self, guard: g}
	conds := []contender{{watcherNone, self, "none"}, {watcherStock, self, "stock"}, {watcherKeepwatch, self, "keepwatch"}}
	m, err := b.allOpens(conds)
	if err != nil {
		t.Fatal(err)
	}
	for key, runs := range m.runs {
		if len(runs) != 1 || runs[0].writer.Opens != opts.rewrites || runs[0].writer.Max < runs[0].writer.P50 {
			t.Errorf("%v: %+v", key, runs)
		}
	}
	runs, err := b.allStopped([]contender{conds[0], conds[2]})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		if r.stops != 2 || r.writer.Opens == 0 || r.watch.Window == 0 {
			t.Errorf("stopped: %+v", r)
		}
	}
	if len(g.children) != 0 {
		t.Errorf("%d children left", len(g.children))
	}
}

// A child the run gives up on is continued before it is killed: none is
// left stopped.
func TestGuardLeavesNoneStopped(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b := writersBench{opts: writersOptions{settle: 50 * time.Millisecond, size: 1024}, self: self, guard: newGuard()} // callbacks that count
	path := t.TempDir() + "/config.yaml"
	if err := os.WriteFile(path, configOfSize(1024, 0), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := b.startWatching(contender{watcherKeepwatch, self, "keepwatch"}, path)
	if err != nil {
		t.Fatal(err)
	}
	pid := w.cmd.Process.Pid
	if err := w.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	if err := waitStopped(pid); err != nil {
		t.Fatal(err)
	}
	b.guard.end(w)
	if state := processState(pid); state != 0 {
		t.Errorf("the child is still there, in state %c", state)
	}
}
