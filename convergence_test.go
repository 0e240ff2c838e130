package file

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/keepwatch/file/kubevol"
	"github.com/stretchr/testify/require"
)

// The promise, checked against sequences nobody thought of: after the
// filesystem settles, the callback has seen the content on disk, whatever
// happened on the way.
//
// Each sequence watches one path and runs 5 to 50 random operations on it,
// with random pauses. `make test` runs a fixed sample (the same seeds every
// time, so that a failure there is a regression, not luck); `make soak`
// runs random seeds for as long as it is given. Failures print the seed; to
// replay one:
//
//	go test -run TestConvergence -convergence.seed=N -convergence.seqs=1
var (
	convSeed     = flag.Uint64("convergence.seed", 0, "seed of the first sequence (0: the fixed sample, or random when soaking)")
	convSeqs     = flag.Int("convergence.seqs", 40, "sequences to run")
	convDuration = flag.Duration("convergence.soak", 0, "run sequences for this long instead (soak)")
	convParallel = flag.Int("convergence.parallel", 4, "sequences run at once")
)

// sampleSeed is the first seed of the fixed sample.
const sampleSeed = 1

func TestConvergence(t *testing.T) {
	seed := *convSeed
	if s := os.Getenv("KEEPWATCH_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		require.NoError(t, err)
		seed = n
	}
	switch {
	case seed != 0:
	case *convDuration > 0:
		seed = rand.Uint64()
	default:
		seed = sampleSeed
	}
	t.Logf("first seed %d (replay with -convergence.seed=%d)", seed, seed)

	var stats soakStats
	stop := time.Now().Add(*convDuration)
	more := func(i int) bool {
		if *convDuration > 0 {
			return time.Now().Before(stop)
		}
		return i < *convSeqs
	}
	if *convDuration > 0 {
		done := make(chan struct{})
		defer close(done)
		go stats.progress(t, done)
	}

	var wg sync.WaitGroup
	sem := make(chan struct{}, *convParallel)
	for i := 0; more(i) && !t.Failed(); i++ {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			s := seed + uint64(i)
			t.Run(fmt.Sprintf("seed=%d", s), func(t *testing.T) {
				ops := runSequence(t, s)
				stats.add(ops, t.Failed())
			})
		})
	}
	wg.Wait()
	t.Logf("%s", stats.String())
}

type soakStats struct {
	seqs, ops, failures atomic.Int64
	start               time.Time
	once                sync.Once
}

func (s *soakStats) add(ops int, failed bool) {
	s.once.Do(func() { s.start = time.Now() })
	s.seqs.Add(1)
	s.ops.Add(int64(ops))
	if failed {
		s.failures.Add(1)
	}
}

func (s *soakStats) String() string {
	return fmt.Sprintf("convergence: %d sequences, %d operations, %d failures",
		s.seqs.Load(), s.ops.Load(), s.failures.Load())
}

func (s *soakStats) progress(t *testing.T, done <-chan struct{}) {
	tick := time.NewTicker(10 * time.Second)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return
		case <-tick.C:
			fmt.Fprintf(os.Stderr, "soak: %s after %s\n", s, time.Since(s.start).Round(time.Second))
		}
	}
}

// world is the filesystem one sequence plays with. The watched path is
// root/vol/config.yaml; what it is changes with the operations: a plain
// file, a key of a kubelet volume, a symlink into root/other, or nothing.
type world struct {
	t    *testing.T
	rng  *rand.Rand
	root string
	vol  string // root/vol
	path string // root/vol/config.yaml
	gen  int
	log  []string
}

func (w *world) other() string { return filepath.Join(w.root, "other") }

// next returns new content; now and then it is empty.
func (w *world) next() string {
	w.gen++
	if w.rng.IntN(25) == 0 {
		return ""
	}
	return fmt.Sprintf("gen: %d\npad: %s\n", w.gen, strings.Repeat("x", w.rng.IntN(2000)))
}

type change struct {
	name string
	do   func(w *world) error
}

var changes = []change{
	{"kubelet swap", func(w *world) error { return w.kubelet(false) }},
	{"kubelet remove-then-create swap", func(w *world) error { return w.kubelet(true) }},
	{"rename-over save", func(w *world) error { return w.renameOver(w.path, w.next()) }},
	{"in-place truncate+write", func(w *world) error { return w.inPlace(w.next(), false) }},
	{"append", func(w *world) error { return w.inPlace(w.next(), true) }},
	{"delete", func(w *world) error { return ignoreMissing(os.Remove(w.path)) }},
	{"delete and recreate", func(w *world) error {
		if err := ignoreMissing(os.Remove(w.path)); err != nil {
			return err
		}
		w.pause()
		return w.create(w.path, w.next())
	}},
	{"delete the directory and recreate it", func(w *world) error {
		if err := os.RemoveAll(w.vol); err != nil {
			return err
		}
		w.pause()
		if err := os.MkdirAll(w.vol, 0o755); err != nil {
			return err
		}
		return w.create(w.path, w.next())
	}},
	{"retarget a symlink", func(w *world) error {
		target := filepath.Join(w.other(), fmt.Sprintf("t%d.yaml", w.gen))
		if err := w.create(target, w.next()); err != nil {
			return err
		}
		if err := os.MkdirAll(w.vol, 0o755); err != nil {
			return err
		}
		tmp := w.path + ".link"
		if err := os.Symlink(target, tmp); err != nil {
			return err
		}
		return os.Rename(tmp, w.path)
	}},
	{"edit the symlink's target", func(w *world) error {
		real, err := filepath.EvalSymlinks(w.path)
		if err != nil || filepath.Dir(real) != w.other() {
			return w.inPlace(w.next(), false)
		}
		if w.rng.IntN(2) == 0 {
			return w.renameOver(real, w.next())
		}
		return w.inPlace(w.next(), false)
	}},
	{"touch", func(w *world) error {
		now := time.Now().Add(time.Duration(w.rng.IntN(1000)) * time.Second)
		return ignoreMissing(os.Chtimes(w.path, now, now))
	}},
	{"chmod", func(w *world) error { return ignoreMissing(os.Chmod(w.path, fs.FileMode(0o600|w.rng.IntN(0o70)))) }},
	{"identical rewrite", func(w *world) error {
		b, err := os.ReadFile(w.path)
		if err != nil {
			return ignoreMissing(err)
		}
		return w.inPlace(string(b), false)
	}},
}

// kubelet updates the volume at vol as kubelet would, first making vol a
// kubelet volume if it is not one.
func (w *world) kubelet(removeThenCreate bool) error {
	payload := map[string]string{"config.yaml": w.next(), "other.yaml": "other\n"}
	if _, err := os.Lstat(filepath.Join(w.vol, "..data")); err != nil {
		if err := os.RemoveAll(w.vol); err != nil {
			return err
		}
		_, err := kubevol.New(w.vol, payload)
		return err
	}
	v := &kubevol.Volume{Dir: w.vol}
	if _, err := os.Lstat(w.path); err != nil {
		// The key was deleted by hand: kubelet puts the link back.
		if err := os.Symlink("..data/config.yaml", w.path); err != nil {
			return err
		}
	}
	if removeThenCreate {
		return v.SwapRemoveCreate(payload, time.Duration(w.rng.IntN(20))*time.Millisecond)
	}
	_, err := v.Update(payload)
	return err
}

func (w *world) renameOver(path, data string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(data), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// inPlace truncates and writes the file the path leads to (or appends to
// it), in up to three pieces with short pauses.
func (w *world) inPlace(data string, appending bool) error {
	flags := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	if appending {
		flags = os.O_WRONLY | os.O_CREATE | os.O_APPEND
	}
	if err := os.MkdirAll(w.vol, 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(w.path, flags, 0o644)
	if err != nil {
		return err
	}
	pieces := 1 + w.rng.IntN(3)
	step := len(data)/pieces + 1
	for i := 0; i < len(data); i += step {
		if _, err := f.WriteString(data[i:min(i+step, len(data))]); err != nil {
			f.Close()
			return err
		}
		if i+step < len(data) {
			time.Sleep(time.Duration(w.rng.IntN(3)) * time.Millisecond)
		}
	}
	return f.Close()
}

func (w *world) create(path, data string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(data), 0o644)
}

// pause waits 0 to 50 ms, and usually not at all, so that bursts happen.
func (w *world) pause() {
	if w.rng.IntN(3) == 0 {
		time.Sleep(time.Duration(w.rng.IntN(50)) * time.Millisecond)
	}
}

func ignoreMissing(err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// runSequence runs one random sequence and checks the promise. It returns
// the number of operations run.
func runSequence(t *testing.T, seed uint64) int {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	root := t.TempDir()
	w := &world{t: t, rng: rng, root: root, vol: filepath.Join(root, "vol"), path: filepath.Join(root, "vol", "config.yaml")}
	require.NoError(t, os.MkdirAll(w.other(), 0o755))
	require.NoError(t, w.create(w.path, w.next()))

	f := Provider(w.path, WithLogger(failLogger(t)), WithRecheckInterval(0), WithErrorCallbacks())
	base, err := f.ReadBytes()
	require.NoError(t, err)
	var unwatched atomic.Bool
	var late atomic.Int32
	r := newRecorder(f)
	require.NoError(t, f.Watch(func(event any, err error) {
		if unwatched.Load() {
			late.Add(1)
		}
		r.cb(event, err)
	}))

	n := 5 + rng.IntN(46)
	for range n {
		o := changes[rng.IntN(len(changes))]
		w.log = append(w.log, o.name)
		require.NoError(t, o.do(w), "op %q; seed %d; ops so far: %v", o.name, seed, w.log)
		w.pause()
	}

	if *convSeqs == 1 && *convDuration == 0 {
		t.Logf("replaying seed %d\nops: %s", seed, strings.Join(w.log, ", "))
		defer func() { t.Logf("calls: %s", r) }()
	}
	settled := func() bool { return converged(w.path, string(base), r) == nil }
	if !waitUntil(5*time.Second, settled) {
		t.Errorf("seed %d: not converged: %v\nops: %s\ncalls: %s", seed, converged(w.path, string(base), r), strings.Join(w.log, ", "), r)
	}
	// Nothing more may arrive once settled: no late repeat, no stale state.
	time.Sleep(3 * defaultQuietWindow)
	if err := converged(w.path, string(base), r); err != nil {
		t.Errorf("seed %d: diverged after settling: %v\nops: %s\ncalls: %s", seed, err, strings.Join(w.log, ", "), r)
	}
	// The baseline counts: delivering what ReadBytes returned is a repeat.
	if i, data, ok := r.repeat(string(base)); ok {
		t.Errorf("seed %d: call %d repeats %q\nops: %s\ncalls: %s", seed, i, trim(data), strings.Join(w.log, ", "), r)
	}

	shutdown(t, f)
	unwatched.Store(true)
	_ = w.renameOver(w.path, "after unwatch\n")
	time.Sleep(2 * defaultQuietWindow)
	if late.Load() != 0 {
		t.Errorf("seed %d: callback after Unwatch returned", seed)
	}
	return n
}

// converged says how what the user last got falls short of the file on
// disk, or nil if it matches: the last delivery (or, before any, the
// baseline that ReadBytes returned before Watch) is the content, or, when
// the file is gone or unreadable, a problem was reported after it.
func converged(path, base string, r *recorder) error {
	want, err := os.ReadFile(path)
	// Problems with the watch itself say nothing about the content: the
	// user's view is the last delivery or file error.
	last := call{data: base}
	for _, c := range r.calls() {
		if c.err == nil || !isWatchProblem(c.err) {
			last = c
		}
	}
	switch {
	case err != nil && last.err == nil:
		return fmt.Errorf("file unreadable (%v) but the last call delivered %q", err, trim(last.data))
	case err != nil:
		return nil
	case last.err != nil:
		return fmt.Errorf("file holds %q but the last call reported %v", trim(string(want)), last.err)
	case last.data != string(want):
		return fmt.Errorf("file holds %q but the last delivery was %q", trim(string(want)), trim(last.data))
	}
	return nil
}

func trim(s string) string {
	if i := strings.Index(s, "\npad"); i >= 0 {
		return s[:i]
	}
	return s
}

func waitUntil(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
	return true
}
