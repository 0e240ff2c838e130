package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"
)

// cpuOptions are the cpu command's flags.
type cpuOptions struct {
	reps        int
	settle      time.Duration
	window      time.Duration
	tokenWindow time.Duration
	loads       []string
	watchers    []string
	trees       []string
	base        string
	profileDir  string
}

func parseCPUFlags(args []string) (cpuOptions, error) {
	var o cpuOptions
	fs := flag.NewFlagSet("cpu", flag.ContinueOnError)
	fs.IntVar(&o.reps, "reps", 3, "repetitions; the watchers take turns within each")
	fs.DurationVar(&o.settle, "settle", time.Second, "wait after the watch starts, before the window")
	fs.DurationVar(&o.window, "window", 10*time.Second, "the measured window")
	fs.DurationVar(&o.tokenWindow, "token-window", 20*time.Second, "the measured window under the token load")
	loads := fs.String("loads", "idle,log,churn,token", "loads, in order: idle, log, churn, token, trickle")
	watchers := fs.String("watchers", "stock,keepwatch,inotify", "watchers: stock, keepwatch, inotify, inotify-path")
	trees := fs.String("trees", os.Getenv("KEEPWATCH_TREE"), "keepwatch trees to measure side by side (spaces or commas between); default: this checkout's")
	fs.StringVar(&o.base, "base", quietBase(), "where each run's directory is made")
	fs.StringVar(&o.profileDir, "cpuprofile", "", "write a CPU profile of each keepwatch window into this directory")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	o.loads, o.watchers, o.trees = list(*loads), list(*watchers), list(*trees)
	if o.reps < 1 {
		return o, fmt.Errorf("-reps %d: at least 1", o.reps)
	}
	for _, load := range o.loads {
		if !slices.Contains([]string{loadIdle, loadLog, loadChurn, loadToken, loadTrickle}, load) {
			return o, fmt.Errorf("unknown load %q", load)
		}
	}
	return o, nil
}

// quietBase is /var/tmp where there is one: builds and tests make and
// remove files in /tmp all the time, and keepwatch watches every
// directory on the path.
func quietBase() string {
	if fi, err := os.Stat("/var/tmp"); err == nil && fi.IsDir() {
		return "/var/tmp"
	}
	return os.TempDir()
}

func list(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' })
}

// A contender is one watcher as measured: the binary that runs it, and
// its name in the table. Each keepwatch tree is a contender of its own.
type contender struct {
	watcher string
	exe     string
	label   string
}

// runCPU measures every load under every contender, reps times, and
// prints the table.
func runCPU(args []string) error {
	opts, err := parseCPUFlags(args)
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "keepwatch-cpu-build-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	trees, err := prepareTrees(opts.trees, self, work)
	if err != nil {
		return err
	}
	contenders, err := contendersOf(opts.watchers, trees, self)
	if err != nil {
		return err
	}
	b := bench{opts: opts, self: self}
	if b.background, err = countBackground(opts.base); err != nil {
		fmt.Fprintf(os.Stderr, "others' activity not counted: %v\n", err)
	}
	printSetting(os.Stdout, opts, trees)
	m, err := b.runAll(contenders)
	if err != nil {
		return err
	}
	m.print(os.Stdout)
	return nil
}

// runAll runs every contender under every load, reps times. Within a
// repetition the contenders take turns for each load, starting one place
// further each repetition, so that a drift in the machine's load falls
// on all of them.
func (b bench) runAll(contenders []contender) (*measurements, error) {
	m := newMeasurements(b.opts, contenders)
	for rep := range b.opts.reps {
		for _, load := range b.opts.loads {
			for _, c := range rotate(contenders, rep) {
				r, err := b.measure(load, c, rep)
				if err != nil {
					return nil, fmt.Errorf("%s under %s: %w", c.label, load, err)
				}
				fmt.Fprintf(os.Stderr, "rep %d %-7s %-30s %9.2f ms/min %6d callbacks\n", rep+1, load, c.label, r.watch.perMinute(), r.watch.Callbacks)
				m.add(load, c.label, r)
			}
		}
	}
	return m, nil
}

// background counts others' activity that every run's keepwatch sees:
// events in the directories above the runs', and changes of the mount
// table, on each of which keepwatch looks at its watches again.
type background struct {
	events, mounts atomic.Int64
}

// runPrefix begins the names of this program's own directories, whose
// making and removal are not others' activity.
const runPrefix = "keepwatch-cpu-"

func countBackground(base string) (*background, error) {
	var b background
	err := watchDirs(directoriesAbove(filepath.Join(base, "run")), func(name []byte) {
		if !bytes.HasPrefix(name, []byte(runPrefix)) {
			b.events.Add(1)
		}
	})
	if err == nil {
		err = watchMounts(func() { b.mounts.Add(1) })
	}
	return &b, err
}

func contendersOf(watchers []string, trees []tree, self string) ([]contender, error) {
	var cs []contender
	for _, w := range watchers {
		switch w {
		case watcherStock:
			cs = append(cs, contender{w, self, "koanf stock"})
		case watcherBare:
			cs = append(cs, contender{w, self, "bare inotify"})
		case watcherBarePath:
			cs = append(cs, contender{w, self, "bare inotify, every dir"})
		case watcherKeepwatch:
			for _, t := range trees {
				cs = append(cs, contender{w, t.exe, "keepwatch " + t.label})
			}
		default:
			return nil, fmt.Errorf("unknown watcher %q: stock, keepwatch, inotify or inotify-path", w)
		}
	}
	return cs, nil
}

func rotate[T any](s []T, n int) []T {
	n %= len(s)
	return append(append([]T{}, s[n:]...), s[:n]...)
}

// runResult is one run of one watcher under one load.
type runResult struct {
	watch      watchResult
	load       loadResult
	background int64 // events in the run directory's ancestors
	mounts     int64 // changes of the mount table
}

// bench is what every run needs.
type bench struct {
	opts       cpuOptions
	self       string // this program, which runs the loads
	background *background
}

// measure runs one watcher under one load in a directory of its own: the
// load's process first, then the watcher's, which reports its window.
func (b bench) measure(load string, c contender, rep int) (runResult, error) {
	var r runResult
	dir, err := os.MkdirTemp(b.opts.base, runPrefix)
	if err != nil {
		return r, err
	}
	defer os.RemoveAll(dir)
	if err := makeLayout(load, dir); err != nil {
		return r, err
	}
	var gen *child
	if load != loadIdle {
		if gen, err = startChild(b.self, "load", []string{"-load", load, "-dir", dir}, nil); err != nil {
			return r, err
		}
		if err := gen.waitReady(); err != nil {
			return r, err
		}
	}
	events, mounts := b.background.events.Load(), b.background.mounts.Load()
	err = b.watchOnce(load, c, configPath(load, dir), rep, &r.watch)
	r.background = b.background.events.Load() - events
	r.mounts = b.background.mounts.Load() - mounts
	if gen != nil {
		if lerr := gen.stop(&r.load); err == nil {
			err = lerr
		}
	}
	return r, err
}

func (b bench) watchOnce(load string, c contender, path string, rep int, r *watchResult) error {
	opts, window := b.opts, b.opts.window
	if load == loadToken {
		window = opts.tokenWindow
	}
	args := []string{"-watcher", c.watcher, "-path", path, "-settle", opts.settle.String(), "-window", window.String()}
	if opts.profileDir != "" && c.watcher == watcherKeepwatch {
		name := fmt.Sprintf("%s-%s-%d.prof", strings.ReplaceAll(c.label, " ", "-"), load, rep+1)
		args = append(args, "-cpuprofile", filepath.Join(opts.profileDir, name))
	}
	w, err := startChild(c.exe, "watch", args, nil)
	if err != nil {
		return err
	}
	return w.result(r)
}
