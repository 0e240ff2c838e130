package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/keepwatch/file"
	stock "github.com/knadh/koanf/providers/file"
	"golang.org/x/sys/unix"
)

// The writers command's children.
const (
	roleWatching = "watching" // a watcher, until its standard input closes
	roleRewrite  = "rewrite"  // the writer
)

// runWritersChild runs one of the writers command's children.
func runWritersChild(role string, args []string) error {
	fs := flag.NewFlagSet(role, flag.ContinueOnError)
	watcher := fs.String("watcher", watcherKeepwatch, "watching: stock, keepwatch, or none (a process that watches nothing)")
	path := fs.String("path", "", "the config")
	settle := fs.Duration("settle", time.Second, "watching: wait after the watch starts")
	size := fs.Int("size", 1<<20, "rewrite: bytes written each time")
	n := fs.Int("n", 0, "rewrite: how many times (0: until told to stop)")
	pause := fs.Duration("pause", 0, "rewrite: pause after each close")
	slow := fs.Duration("slow", 10*time.Millisecond, "rewrite: an open longer than this is counted")
	reload := fs.Bool("reload", true, "watching: the callback reloads the config through koanf (false: it counts alone)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch role {
	case roleWatching:
		return watchUntilStopped(*watcher, *path, *settle, *reload)
	case roleRewrite:
		return rewrite(*path, *size, *n, *pause, *slow)
	}
	return fmt.Errorf("%w %q", errUnknownRole, role)
}

// watchUntilStopped is the watching child: it starts the watcher, lets it
// settle, says it is ready, and reports its CPU and callbacks from then
// until its standard input closes.
func watchUntilStopped(watcher, path string, settle time.Duration, reload bool) error {
	var calls, errs atomic.Int64
	called := func(err error) {
		calls.Add(1)
		if err != nil {
			errs.Add(1)
		}
	}
	start := startWatcher
	if !reload {
		start = startCounting
	}
	if err := start(watcher, path, called); err != nil {
		return err
	}
	time.Sleep(settle)
	stop := stdinClosed()
	cpu0, t0, calls0, errs0 := cpuTime(), time.Now(), calls.Load(), errs.Load()
	if err := sayReady(); err != nil {
		return err
	}
	<-stop
	return say(watchResult{CPU: cpuTime() - cpu0, Window: time.Since(t0), Callbacks: calls.Load() - calls0, Errors: errs.Load() - errs0})
}

// startCounting starts watching path with a callback that counts and
// does nothing else: what is left of a watcher's cost to a writer without
// its application's reloads, which a 1 MiB config makes weigh on the CPU.
func startCounting(watcher, path string, called func(error)) error {
	count := func(_ any, err error) { called(err) }
	switch watcher {
	case watcherStock:
		return stock.Provider(path).Watch(count)
	case watcherKeepwatch:
		return file.Provider(path).Watch(count)
	case watcherNone:
		return nil
	}
	return fmt.Errorf("unknown watcher %q: stock or keepwatch", watcher)
}

// rewriteStats is what the writer reports of its opens.
type rewriteStats struct {
	Opens         int
	P50, P99, Max time.Duration
	Slow          int // opens longer than -slow
}

// rewrite is the writer: it rewrites path in place n times (or until its
// standard input closes), open O_WRONLY|O_TRUNC, one write of size bytes,
// close, timing each open.
func rewrite(path string, size, n int, pause, slow time.Duration) error {
	buf := configOfSize(size, 0)
	stop := stdinClosed()
	if err := sayReady(); err != nil {
		return err
	}
	var opens []time.Duration
	for i := 0; n == 0 || i < n; i++ {
		if n == 0 && closed(stop) {
			break
		}
		stamp(buf, i+1)
		start := time.Now()
		fd, err := unix.Open(path, unix.O_WRONLY|unix.O_TRUNC|unix.O_CLOEXEC, 0)
		opens = append(opens, time.Since(start))
		if err != nil {
			return err
		}
		err = writeAll(fd, buf)
		if cerr := unix.Close(fd); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
		if pause > 0 {
			time.Sleep(pause)
		}
	}
	return say(openSummary(opens, slow))
}

func closed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

func writeAll(fd int, b []byte) error {
	for len(b) > 0 {
		n, err := unix.Write(fd, b)
		if err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}

// configOfSize is a YAML config of size bytes (at least a few dozen): a
// generation, stamped anew for each rewrite so that each is a change, and
// a padding string.
func configOfSize(size, gen int) []byte {
	const head = "gen:          \npad: \""
	b := make([]byte, max(size, len(head)+2))
	copy(b, head)
	for i := len(head); i < len(b)-2; i++ {
		b[i] = 'x'
	}
	copy(b[len(b)-2:], "\"\n")
	stamp(b, gen)
	return b
}

// stamp writes gen into the config's generation, nine places wide.
func stamp(b []byte, gen int) {
	copy(b[len("gen: "):], fmt.Sprintf("%9d", gen%1_000_000_000))
}

// openSummary sums up the opens' times.
func openSummary(opens []time.Duration, slow time.Duration) rewriteStats {
	s := rewriteStats{Opens: len(opens)}
	if len(opens) == 0 {
		return s
	}
	sorted := slices.Sorted(slices.Values(opens))
	s.P50, s.P99, s.Max = percentile(sorted, 50), percentile(sorted, 99), sorted[len(sorted)-1]
	for _, d := range opens {
		if d > slow {
			s.Slow++
		}
	}
	return s
}

// A guard keeps the children the writers command starts, so that however
// it ends (an error, a deadline, a signal) none is left behind, and none
// stopped: each is sent SIGCONT before it is killed. A child whose parent
// dies unawares is killed by the kernel (Pdeathsig), stopped or not.
type guard struct {
	mu       sync.Mutex
	children map[*child]bool
	dirs     map[string]bool // removed on a signal too
	expired  atomic.Bool
}

func newGuard() *guard {
	return &guard{children: map[*child]bool{}, dirs: map[string]bool{}}
}

// tempDir makes a directory in base, which removeDir removes, or, if the
// harness is told to end first, stopOnSignal.
func (g *guard) tempDir(base, pattern string) (string, error) {
	dir, err := os.MkdirTemp(base, pattern)
	if err == nil {
		g.mu.Lock()
		g.dirs[dir] = true
		g.mu.Unlock()
	}
	return dir, err
}

func (g *guard) removeDir(dir string) {
	os.RemoveAll(dir)
	g.mu.Lock()
	delete(g.dirs, dir)
	g.mu.Unlock()
}

// startReady starts a child and waits for its "ready".
func (g *guard) startReady(exe, role string, args []string) (*child, error) {
	c, err := startChild(exe, role, args, func(cmd *exec.Cmd) {
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	})
	if err != nil {
		return nil, err
	}
	g.mu.Lock()
	g.children[c] = true
	g.mu.Unlock()
	if err := c.waitReady(); err != nil {
		g.forget(c)
		return nil, g.explain(err)
	}
	return c, nil
}

// result waits for the child's result, and stop tells it to stop first.
func (g *guard) result(c *child, v any) error {
	err := c.result(v)
	g.forget(c)
	return g.explain(err)
}

func (g *guard) stop(c *child, v any) error {
	err := c.stop(v)
	g.forget(c)
	return g.explain(err)
}

// end continues, kills and waits for c, if it has not ended yet.
func (g *guard) end(c *child) {
	g.mu.Lock()
	alive := g.children[c]
	g.mu.Unlock()
	if alive {
		continueAndKill(c)
		c.kill()
		g.forget(c)
	}
}

func (g *guard) forget(c *child) {
	g.mu.Lock()
	delete(g.children, c)
	g.mu.Unlock()
}

// killAll continues and kills every child not ended: safe from any
// goroutine, it does not wait for them.
func (g *guard) killAll() {
	g.mu.Lock()
	defer g.mu.Unlock()
	for c := range g.children {
		continueAndKill(c)
	}
}

func continueAndKill(c *child) {
	c.cmd.Process.Signal(syscall.SIGCONT)
	c.cmd.Process.Kill()
}

// deadline kills every child if the run is not over after limit, so that
// no run hangs; what it returns ends the deadline.
func (g *guard) deadline(limit time.Duration) (cancel func()) {
	t := time.AfterFunc(limit, func() {
		g.expired.Store(true)
		g.killAll()
	})
	return func() { t.Stop() }
}

// explain says that an error came of the deadline, if it did.
func (g *guard) explain(err error) error {
	if err != nil && g.expired.Load() {
		return fmt.Errorf("the run outlasted its deadline, its processes killed: %w", err)
	}
	return err
}

// stopOnSignal continues and kills every child when this process is told
// to end (^C, kill), removes its directories, and exits.
func stopOnSignal(g *guard) {
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		s := <-signals
		g.killAll()
		time.Sleep(100 * time.Millisecond) // for the killed to let go of the files
		g.mu.Lock()
		for dir := range g.dirs {
			os.RemoveAll(dir)
		}
		g.mu.Unlock()
		fmt.Fprintf(os.Stderr, "cpu writers: %v: its children continued and killed\n", s)
		os.Exit(1)
	}()
}
