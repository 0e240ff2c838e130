package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/keepwatch/file/kubevol"
)

// The loads: what another process does near the watched config, which
// nothing touches. In each, a burst of work, then a 0.1 s pause.
const (
	loadIdle  = "idle"  // nothing
	loadLog   = "log"   // 200 appends to <dir>/svc/app.log, beside the config
	loadChurn = "churn" // 100 files made and removed in <dir>, the config's parent's parent
	loadToken = "token" // a projected volume's token rotated, every 0.1 s
	// Not in the table: one file made and removed in <dir>, then
	// a 10 ms pause. Events one by one, each waking the watcher from idle,
	// where churn's come in bursts.
	loadTrickle = "trickle"
)

const (
	burstPause   = 100 * time.Millisecond
	tricklePause = 10 * time.Millisecond
	logLines     = 200
	churnFiles   = 100
	configText   = "app:\n  name: demo\n  port: 8080\n"
)

// configPath is the config a watcher watches under load in dir: a
// service's config, <dir>/svc/config.yaml, or, for the token load, a key
// of a projected volume, <dir>/vol/config.yaml.
func configPath(load, dir string) string {
	if load == loadToken {
		return filepath.Join(dir, "vol", "config.yaml")
	}
	return filepath.Join(dir, "svc", "config.yaml")
}

// makeLayout lays out dir for load: the config, and the volume kubelet
// would have made.
func makeLayout(load, dir string) error {
	if load == loadToken {
		_, err := kubevol.New(filepath.Join(dir, "vol"), tokenPayload(0))
		return err
	}
	path := configPath(load, dir)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(configText), 0o644)
}

func tokenPayload(n int) map[string]string {
	return map[string]string{"config.yaml": configText, "token": "token-" + strconv.Itoa(n)}
}

// loadResult is what a load child reports: how much it did, so that the
// report can show the load was what it says.
type loadResult struct {
	Ops     int // appends, creates and deletes, or rotations
	Elapsed time.Duration
}

func (r loadResult) perSecond() float64 { return float64(r.Ops) / r.Elapsed.Seconds() }

// runLoad is the load child: it works until its standard input closes.
func runLoad(args []string) error {
	fs := flag.NewFlagSet("load", flag.ContinueOnError)
	load := fs.String("load", loadLog, "log, churn, token or trickle")
	dir := fs.String("dir", "", "the directory laid out by makeLayout")
	if err := fs.Parse(args); err != nil {
		return err
	}
	burst, err := burstOf(*load, *dir)
	if err != nil {
		return err
	}
	pause := burstPause
	if *load == loadTrickle {
		pause = tricklePause
	}
	stop := stdinClosed()
	if err := sayReady(); err != nil {
		return err
	}
	start, ops := time.Now(), 0
	for {
		n, err := burst()
		ops += n
		if err != nil {
			return err
		}
		select {
		case <-stop:
			return say(loadResult{Ops: ops, Elapsed: time.Since(start)})
		case <-time.After(pause):
		}
	}
}

// burstOf returns one burst of load's work, which reports how many
// operations it made.
func burstOf(load, dir string) (func() (int, error), error) {
	switch load {
	case loadLog:
		return func() (int, error) { return appendLines(filepath.Join(dir, "svc", "app.log")) }, nil
	case loadChurn:
		return func() (int, error) { return churn(dir, churnFiles) }, nil
	case loadTrickle:
		return func() (int, error) { return churn(dir, 1) }, nil
	case loadToken:
		return rotator(filepath.Join(dir, "vol")), nil
	}
	return nil, fmt.Errorf("unknown load %q", load)
}

// appendLines appends logLines lines to path as `echo ... >> app.log`
// does: each line opens the file, writes and closes it.
func appendLines(path string) (int, error) {
	for i := range logLines {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			return i, err
		}
		_, err = fmt.Fprintf(f, "%s line %d: request served\n", time.Now().Format(time.RFC3339Nano), i)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return i, err
		}
	}
	return logLines, nil
}

// churn makes and removes files files in dir, as `: > f; rm -f f` does
// each: two operations a file.
func churn(dir string, files int) (int, error) {
	for i := range files {
		name := filepath.Join(dir, "churn-"+strconv.Itoa(i))
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
		if err != nil {
			return 2 * i, err
		}
		f.Close()
		if err := os.Remove(name); err != nil {
			return 2*i + 1, err
		}
	}
	return 2 * files, nil
}

// rotator returns a burst that rotates the volume's token once, as
// kubelet's AtomicWriter does; config.yaml keeps its content.
func rotator(dir string) func() (int, error) {
	vol, n := &kubevol.Volume{Dir: dir}, 0
	return func() (int, error) {
		n++
		if _, err := vol.Update(tokenPayload(n)); err != nil {
			return 0, err
		}
		return 1, nil
	}
}
