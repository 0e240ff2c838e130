package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"time"

	"golang.org/x/sys/unix"
)

// The writers command (issue 42): what a watch costs other processes that
// write the config it watches. (a) A writer rewrites the file in place,
// timing each open(2), with nothing, the stock provider, or keepwatch (each
// tree) watching it from another process. (b) keepwatch watching, a writer
// rewriting the file all the time, and the watching process stopped
// (SIGSTOP) at random moments: a lease it held when it stopped holds every
// writer's open until it goes on.

type writersOptions struct {
	parts    []string
	trees    []string
	dir      string
	size     int
	reps     int
	rewrites int
	pause    time.Duration
	settle   time.Duration
	runs     int
	stops    int
	stop     time.Duration
	gap      time.Duration
	rewrite  time.Duration
	slow     time.Duration
	seed     uint64
	reload   bool
}

const (
	partOpens   = "opens"
	partStopped = "stopped"
)

func parseWritersFlags(args []string) (writersOptions, error) {
	var o writersOptions
	fs := flag.NewFlagSet("writers", flag.ContinueOnError)
	parts := fs.String("parts", "opens,stopped", "what to measure: opens (a writer's opens while watched), stopped (while the watch is stopped)")
	trees := fs.String("trees", os.Getenv("KEEPWATCH_TREE"), "keepwatch trees to measure side by side (spaces or commas between); default: this checkout's")
	fs.StringVar(&o.dir, "dir", "/dev/shm", "where the config's directory is made (tmpfs; /tmp for ext4 here)")
	fs.IntVar(&o.size, "size", 1<<20, "the config's size in bytes")
	fs.IntVar(&o.reps, "reps", 3, "opens: repetitions; the watchers take turns within each")
	fs.IntVar(&o.rewrites, "rewrites", 2000, "opens: rewrites timed in each run")
	fs.DurationVar(&o.pause, "pause", time.Millisecond, "opens: the pause after each close in the paused mode")
	fs.DurationVar(&o.settle, "settle", time.Second, "wait after the watch starts, before the writer")
	fs.IntVar(&o.runs, "runs", 20, "stopped: runs, each tree once in each")
	fs.IntVar(&o.stops, "stops", 15, "stopped: stops in each run")
	fs.DurationVar(&o.stop, "stop", 2*time.Second, "stopped: how long each stop lasts")
	fs.DurationVar(&o.gap, "gap", time.Second, "stopped: the time before each stop is random, from a tenth of this to this")
	fs.DurationVar(&o.rewrite, "stopped-pause", time.Millisecond, "stopped: the writer's pause after each close (0: back to back, when it mostly holds the file itself)")
	fs.DurationVar(&o.slow, "slow", 10*time.Millisecond, "stopped: an open longer than this waited")
	fs.BoolVar(&o.reload, "reload", true, "the watchers' callbacks reload the config through koanf, as an application's do (false: they only count)")
	fs.Uint64Var(&o.seed, "seed", 0, "stopped: seed of the stops' moments (0: random, printed)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	o.parts, o.trees = list(*parts), list(*trees)
	for _, p := range o.parts {
		if p != partOpens && p != partStopped {
			return o, fmt.Errorf("unknown part %q: opens or stopped", p)
		}
	}
	if o.reps < 1 || o.rewrites < 1 || o.runs < 1 || o.stops < 1 || o.size < 1 || o.gap <= 0 {
		return o, fmt.Errorf("-reps, -rewrites, -runs, -stops, -size and -gap must be positive")
	}
	if o.seed == 0 {
		o.seed = rand.Uint64()
	}
	return o, nil
}

// runWriters measures the parts asked for, every tree side by side.
func runWriters(args []string) error {
	opts, err := parseWritersFlags(args)
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	g := newGuard()
	defer g.killAll()
	stopOnSignal(g)
	work, err := g.tempDir("", "keepwatch-writers-build-")
	if err != nil {
		return err
	}
	defer g.removeDir(work)
	trees, err := prepareTrees(opts.trees, self, work)
	if err != nil {
		return err
	}
	b := writersBench{opts: opts, self: self, guard: g}
	printWritersSetting(opts, trees)
	watchers, err := contendersOf([]string{watcherStock, watcherKeepwatch}, trees, self)
	if err != nil {
		return err
	}
	if slices.Contains(opts.parts, partOpens) {
		conds := append([]contender{{watcher: watcherNone, exe: self, label: "nothing watching"}}, watchers...)
		m, err := b.allOpens(conds)
		if err != nil {
			return err
		}
		m.print(os.Stdout)
	}
	if slices.Contains(opts.parts, partStopped) {
		// A process that watches nothing, stopped at the same moments:
		// what the machine and the stops cost a writer, watch or none.
		conds := append([]contender{{watcher: watcherNone, exe: self, label: "nothing watching"}}, watchers[1:]...)
		runs, err := b.allStopped(conds)
		if err != nil {
			return err
		}
		printStopped(os.Stdout, opts, conds, runs)
	}
	return nil
}

func printWritersSetting(o writersOptions, trees []tree) {
	fmt.Printf("What a watch costs another process that rewrites the config in place (open O_WRONLY|O_TRUNC, write %d bytes, close), each open(2) timed.\n", o.size)
	fmt.Printf("%s, %s, %d CPUs, Linux %s, uid %d, fs.lease-break-time %s s, load average at start %s\n",
		time.Now().Format("2006-01-02 15:04"), runtime.Version(), runtime.NumCPU(), firstLine("/proc/sys/kernel/osrelease"),
		os.Getuid(), firstLine("/proc/sys/fs/lease-break-time"), loadAverage())
	callbacks := "the callbacks reload the config through koanf"
	if !o.reload {
		callbacks = "the callbacks count, and do nothing else (-reload=false)"
	}
	fmt.Printf("The config in %s (%s). Every watcher in a process of its own, started %v before the writer; %s.\n", o.dir, fsName(o.dir), o.settle, callbacks)
	for _, t := range trees {
		fmt.Printf("keepwatch %s: %s\n", t.label, t.dir)
	}
	fmt.Println()
}

// writersBench is what every run needs.
type writersBench struct {
	opts  writersOptions
	self  string
	guard *guard
}

// A mode is how the writer paces its rewrites.
type mode struct {
	name  string
	pause time.Duration
}

func (b writersBench) modes() []mode {
	return []mode{{"back to back", 0}, {fmt.Sprintf("%v pause after each close", b.opts.pause), b.opts.pause}}
}

// allOpens times the writer's opens under every condition in both modes,
// reps times. Within a repetition the conditions take turns for each
// mode, starting one place further each repetition.
func (b writersBench) allOpens(conds []contender) (*opensMeasurements, error) {
	m := &opensMeasurements{opts: b.opts, modes: b.modes(), conds: conds, runs: map[cell][]opensRun{}}
	for rep := range b.opts.reps {
		for _, md := range rotate(m.modes, rep) {
			for _, c := range rotate(conds, rep) {
				r, err := b.opens(c, md)
				if err != nil {
					return nil, fmt.Errorf("%s, %s: %w", c.label, md.name, err)
				}
				fmt.Fprintf(os.Stderr, "rep %d %-24s %-30s open p50 %s p99 %s max %s, %d callbacks\n",
					rep+1, md.name, c.label, micros(r.writer.P50), micros(r.writer.P99), micros(r.writer.Max), r.watch.Callbacks)
				m.runs[cell{md.name, c.label}] = append(m.runs[cell{md.name, c.label}], r)
			}
		}
	}
	return m, nil
}

// opensRun is one run of the writer under one condition.
type opensRun struct {
	writer rewriteStats
	watch  watchResult // zero with nothing watching
}

// opens runs the writer once under c, in a directory of its own.
func (b writersBench) opens(c contender, md mode) (opensRun, error) {
	var r opensRun
	dir, path, err := b.layout()
	if err != nil {
		return r, err
	}
	defer b.guard.removeDir(dir)
	limit := time.Minute + time.Duration(b.opts.rewrites)*(md.pause+10*time.Millisecond)
	defer b.guard.deadline(limit)()
	var w *child
	if c.watcher != watcherNone {
		if w, err = b.startWatching(c, path); err != nil {
			return r, err
		}
		defer b.guard.end(w)
	}
	writer, err := b.startRewriter(path, b.opts.rewrites, md.pause)
	if err != nil {
		return r, err
	}
	defer b.guard.end(writer)
	if err := b.guard.result(writer, &r.writer); err != nil {
		return r, err
	}
	if w != nil {
		err = b.guard.stop(w, &r.watch)
	}
	return r, err
}

// layout makes the run's directory in -dir and the config in it.
func (b writersBench) layout() (dir, path string, err error) {
	dir, err = b.guard.tempDir(b.opts.dir, "keepwatch-writers-")
	if err != nil {
		return "", "", err
	}
	path = filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(path, configOfSize(b.opts.size, 0), 0o644); err != nil {
		b.guard.removeDir(dir)
		return "", "", err
	}
	return dir, path, nil
}

func (b writersBench) startWatching(c contender, path string) (*child, error) {
	return b.guard.startReady(c.exe, roleWatching, []string{"-watcher", c.watcher, "-path", path, "-settle", b.opts.settle.String(),
		fmt.Sprintf("-reload=%t", b.opts.reload)})
}

// startRewriter starts the writer: n rewrites, or as many as it makes
// until it is stopped if n is 0.
func (b writersBench) startRewriter(path string, n int, pause time.Duration) (*child, error) {
	return b.guard.startReady(b.self, roleRewrite, []string{"-path", path, "-size", fmt.Sprint(b.opts.size),
		"-n", fmt.Sprint(n), "-pause", pause.String(), "-slow", b.opts.slow.String()})
}

// allStopped runs the stopped part runs times, each contender (the
// keepwatch trees, and the process that watches nothing) once in each run,
// taking turns.
func (b writersBench) allStopped(conds []contender) ([]stoppedRun, error) {
	rng := rand.New(rand.NewPCG(b.opts.seed, 0))
	var runs []stoppedRun
	for i := range b.opts.runs {
		for _, c := range rotate(conds, i) {
			r, err := b.stopped(c, rng)
			if err != nil {
				return nil, fmt.Errorf("%s, run %d: %w", c.label, i+1, err)
			}
			r.run = i + 1
			fmt.Fprintf(os.Stderr, "run %2d %-30s %6d opens, %d over %v, longest %s; %d of %d stops caught a lease (%d breaking)\n",
				r.run, c.label, r.writer.Opens, r.writer.Slow, b.opts.slow, millis(r.writer.Max), r.caught, r.stops, r.breaking)
			runs = append(runs, r)
		}
	}
	return runs, nil
}

// stoppedRun is one run of the stopped part.
type stoppedRun struct {
	run      int
	label    string
	writer   rewriteStats
	watch    watchResult
	stops    int
	caught   int // stops during which the file had a lease
	breaking int // of which the lease was seen breaking
}

// stopped runs the writer all the time beside c's watch, and stops the
// watching process -stops times, each for -stop, at random moments,
// looking in /proc/locks meanwhile for a lease on the file.
func (b writersBench) stopped(c contender, rng *rand.Rand) (stoppedRun, error) {
	r := stoppedRun{label: c.label}
	dir, path, err := b.layout()
	if err != nil {
		return r, err
	}
	defer b.guard.removeDir(dir)
	id, err := lockID(path)
	if err != nil {
		return r, err
	}
	limit := time.Minute + time.Duration(b.opts.stops)*(b.opts.gap+b.opts.stop+time.Second)
	defer b.guard.deadline(limit)()
	w, err := b.startWatching(c, path)
	if err != nil {
		return r, err
	}
	defer b.guard.end(w) // goes on before it is killed, whatever happens
	writer, err := b.startRewriter(path, 0, b.opts.rewrite)
	if err != nil {
		return r, err
	}
	defer b.guard.end(writer)
	for range b.opts.stops {
		time.Sleep(b.opts.gap/10 + time.Duration(rng.Int64N(int64(b.opts.gap-b.opts.gap/10)+1)))
		state, err := b.stopFor(w, id)
		if err != nil {
			return r, err
		}
		r.stops++
		if state != "" {
			r.caught++
		}
		if state == leaseBreaking {
			r.breaking++
		}
	}
	time.Sleep(b.opts.gap / 10) // the writer's last open after the last stop
	if err := b.guard.stop(writer, &r.writer); err != nil {
		return r, err
	}
	return r, b.guard.stop(w, &r.watch)
}

// stopFor stops w for -stop and returns the lease on the file (id) seen in
// /proc/locks meanwhile: "" for none, else the strongest state seen.
func (b writersBench) stopFor(w *child, id string) (string, error) {
	pid := w.cmd.Process.Pid
	if err := unix.Kill(pid, unix.SIGSTOP); err != nil {
		return "", err
	}
	defer unix.Kill(pid, unix.SIGCONT)
	if err := waitStopped(pid); err != nil {
		return "", err
	}
	var seen string
	for end := time.Now().Add(b.opts.stop); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		locks, err := os.ReadFile("/proc/locks")
		if err != nil {
			return "", err
		}
		seen = stronger(seen, leaseOn(string(locks), id))
	}
	return seen, nil
}

// waitStopped waits until every thread of pid is stopped: the process's
// state is T.
func waitStopped(pid int) error {
	for end := time.Now().Add(time.Second); time.Now().Before(end); time.Sleep(100 * time.Microsecond) {
		if processState(pid) == 'T' {
			return nil
		}
	}
	return fmt.Errorf("process %d not stopped a second after SIGSTOP", pid)
}

// processState is the state letter in /proc/pid/stat, 0 if unknown.
func processState(pid int) byte {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	return statState(string(b))
}

// lockID is how /proc/locks names the file at path: its device's major
// and minor numbers in hex, and its inode.
func lockID(path string) (string, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return "", err
	}
	return fmt.Sprintf("%02x:%02x:%d", unix.Major(st.Dev), unix.Minor(st.Dev), st.Ino), nil
}

// fsName names the filesystem dir is on, for the setting line.
func fsName(dir string) string {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return "?"
	}
	switch st.Type {
	case unix.TMPFS_MAGIC:
		return "tmpfs"
	case unix.EXT4_SUPER_MAGIC:
		return "ext4"
	case unix.XFS_SUPER_MAGIC:
		return "xfs"
	case unix.BTRFS_SUPER_MAGIC:
		return "btrfs"
	}
	return fmt.Sprintf("filesystem 0x%x", st.Type)
}
