package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"sync/atomic"
	"time"

	"github.com/keepwatch/file"
	"github.com/knadh/koanf/parsers/yaml"
	stock "github.com/knadh/koanf/providers/file"
	"github.com/knadh/koanf/v2"
)

// The watchers measured. The bare ones are blocking inotify readers and
// nothing more: "inotify" of the config's directory, the floor any
// watcher of that directory pays; "inotify-path" of every directory on
// the path, as keepwatch at 5a5064d watches them, the floor of that
// design.
const (
	watcherStock     = "stock"
	watcherKeepwatch = "keepwatch"
	watcherBare      = "inotify"
	watcherBarePath  = "inotify-path"
	watcherNone      = "none" // a process that watches nothing: the writers' baseline
)

// watchResult is what a watching child reports of its measured window.
type watchResult struct {
	CPU       time.Duration // user and system time of the process
	Window    time.Duration // wall time
	Callbacks int64         // callbacks (events read, for the bare reader)
	Errors    int64         // callbacks with an error
}

// perMinute is the window's CPU time per minute, in milliseconds.
func (r watchResult) perMinute() float64 {
	return float64(r.CPU) / float64(time.Millisecond) * float64(time.Minute) / float64(r.Window)
}

// runWatch is the watching child: it starts the watcher, lets it settle,
// and reports the CPU its process used over the window that follows.
func runWatch(args []string) error {
	fs := flag.NewFlagSet("watch", flag.ContinueOnError)
	watcher := fs.String("watcher", watcherKeepwatch, "stock, keepwatch, inotify or inotify-path")
	path := fs.String("path", "", "the config file watched")
	settle := fs.Duration("settle", time.Second, "wait before the window")
	window := fs.Duration("window", 10*time.Second, "the measured window")
	profile := fs.String("cpuprofile", "", "write a CPU profile of the window to this file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var calls, errs atomic.Int64
	called := func(err error) {
		calls.Add(1)
		if err != nil {
			errs.Add(1)
		}
	}
	if err := startWatcher(*watcher, *path, called); err != nil {
		return err
	}
	time.Sleep(*settle)
	stopProfile, err := startProfile(*profile)
	if err != nil {
		return err
	}
	cpu0, t0, calls0, errs0 := cpuTime(), time.Now(), calls.Load(), errs.Load()
	time.Sleep(*window)
	cpu1, t1, calls1, errs1 := cpuTime(), time.Now(), calls.Load(), errs.Load()
	stopProfile()
	return say(watchResult{CPU: cpu1 - cpu0, Window: t1.Sub(t0), Callbacks: calls1 - calls0, Errors: errs1 - errs0})
}

// startWatcher starts watching path. The providers' callbacks reload the
// config through koanf, as an application's would, so that a needless
// callback costs what it costs there.
func startWatcher(watcher, path string, called func(error)) error {
	switch watcher {
	case watcherStock:
		p := stock.Provider(path)
		return p.Watch(reloading(p, called))
	case watcherKeepwatch:
		p := file.Provider(path)
		return p.Watch(reloading(p, called))
	case watcherBare:
		return watchBare(filepath.Dir(path), func([]byte) { called(nil) })
	case watcherBarePath:
		return watchDirs(directoriesAbove(path), func([]byte) { called(nil) })
	case watcherNone: // a process that watches nothing, stopped as a watcher is: the writers' baseline
		return nil
	}
	return fmt.Errorf("unknown watcher %q", watcher)
}

// directoriesAbove lists the directories path goes through, from its
// own up to the root.
func directoriesAbove(path string) []string {
	var dirs []string
	for dir := filepath.Dir(filepath.Clean(path)); ; dir = filepath.Dir(dir) {
		dirs = append(dirs, dir)
		if dir == filepath.Dir(dir) {
			return dirs
		}
	}
}

func reloading(p koanf.Provider, called func(error)) func(any, error) {
	return func(_ any, err error) {
		called(err)
		if err == nil {
			koanf.New(".").Load(p, yaml.Parser())
		}
	}
}

// startProfile starts a CPU profile into path, if it is not empty, and
// returns what stops it.
func startProfile(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}
