package main

import (
	"os"
	"runtime"
	"testing"
	"time"
)

// The harness measures for minutes (make bench-cpu, make bench-probe);
// these tests run each of its parts once, briefly, to keep it working.

func TestMain(m *testing.M) {
	if role := os.Getenv(childEnv); role != "" {
		os.Exit(runChild(role, os.Args[1:]))
	}
	os.Exit(m.Run())
}

// TestEveryLoadAndWatcher runs every load and every watcher once, in
// windows of a fraction of a second: they start, load and report.
func TestEveryLoadAndWatcher(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the harness runs on Linux")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	base := t.TempDir()
	bg, err := countBackground(base)
	if err != nil {
		t.Fatal(err)
	}
	opts := cpuOptions{settle: 100 * time.Millisecond, window: 200 * time.Millisecond, tokenWindow: 300 * time.Millisecond, base: base}
	b := bench{opts: opts, self: self, background: bg}
	for _, run := range []struct{ load, watcher string }{
		{loadIdle, watcherStock},
		{loadLog, watcherKeepwatch},
		{loadChurn, watcherBarePath},
		{loadTrickle, watcherKeepwatch},
		{loadToken, watcherBare},
	} {
		r, err := b.measure(run.load, contender{run.watcher, self, run.watcher}, 0)
		if err != nil {
			t.Fatalf("%s under %s: %v", run.watcher, run.load, err)
		}
		if r.watch.Window < opts.window {
			t.Errorf("%s under %s: a window of %v", run.watcher, run.load, r.watch.Window)
		}
		if run.load != loadIdle && r.load.Ops == 0 {
			t.Errorf("%s: no work done", run.load)
		}
		if run.watcher == watcherBare && r.watch.Callbacks == 0 {
			t.Errorf("the bare reader read no event of the token's rotations")
		}
	}
}
