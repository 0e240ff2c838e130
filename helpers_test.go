package file

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/keepwatch/file/internal/decide"

	"github.com/fsnotify/fsnotify"
	"github.com/keepwatch/file/internal/events"
	"github.com/keepwatch/file/internal/yamlparser"
	"github.com/keepwatch/file/kubevol"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// The portable backend stands in for the OS's own when the test binary is
// run with -backend=fsnotify: on Linux that is how the tests see what a
// watch does with what kqueue and ReadDirectoryChangesW can tell it (no
// closes, no watches on files or ancestors), on a machine that has neither.
var backendFlag = flag.String("backend", "", `"fsnotify" to watch through fsnotify, whatever the OS`)

func TestMain(m *testing.M) {
	flag.Parse()
	if *backendFlag == "fsnotify" {
		events.ProcessHub = events.NewHub(events.NewFsnotifyBackend)
	}
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		os.Exit(code)
	}))
}

// waitFor is how long a test waits for something that should take
// milliseconds; it is generous so that a loaded 2-core machine never fails a
// correct test.
const waitFor = 10 * time.Second

const tick = 2 * time.Millisecond

// call is one invocation of the watch callback.
type call struct {
	op   fsnotify.Op
	name string
	data string // what ReadBytes returned inside the callback
	err  error
	at   time.Time
}

// recorder is a watch callback that records every call and, like a koanf
// user, reads the file inside the callback.
type recorder struct {
	f  *File
	mu sync.Mutex
	cs []call
}

func newRecorder(f *File) *recorder { return &recorder{f: f} }

func (r *recorder) cb(event any, err error) {
	c := call{err: err, at: time.Now()}
	if err == nil {
		ev := event.(fsnotify.Event)
		c.op, c.name = ev.Op, ev.Name
		b, rerr := r.f.ReadBytes()
		if rerr != nil {
			c.err = fmt.Errorf("ReadBytes in callback: %w", rerr)
		}
		c.data = string(b)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cs = append(r.cs, c)
}

func (r *recorder) calls() []call {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]call(nil), r.cs...)
}

// contents lists the content of every delivery, in order.
func (r *recorder) contents() []string {
	var out []string
	for _, c := range r.calls() {
		if c.err == nil {
			out = append(out, c.data)
		}
	}
	return out
}

// repeat returns the first delivery that repeats the content before it
// (the baseline base, to begin with) with no problem with the file reported
// in between; after one, the file coming back is delivered whatever it holds.
func (r *recorder) repeat(base string) (int, string, bool) {
	prev, fresh := base, false
	for i, c := range r.calls() {
		switch {
		case c.err != nil:
			fresh = fresh || !isWatchProblem(c.err)
		case c.data == prev && !fresh:
			return i, c.data, true
		default:
			prev, fresh = c.data, false
		}
	}
	return 0, "", false
}

// isWatchProblem reports whether err is about the watch rather than the file.
func isWatchProblem(err error) bool {
	return errors.Is(err, ErrWatchInterrupted) || errors.Is(err, ErrPolling)
}

func (r *recorder) errs() []error {
	var out []error
	for _, c := range r.calls() {
		if c.err != nil {
			out = append(out, c.err)
		}
	}
	return out
}

// last returns the last call, and false if there was none.
func (r *recorder) last() (call, bool) {
	cs := r.calls()
	if len(cs) == 0 {
		return call{}, false
	}
	return cs[len(cs)-1], true
}

// waitContent waits until the last call delivered want.
func (r *recorder) waitContent(t testing.TB, want string) call {
	t.Helper()
	require.Eventually(t, func() bool {
		c, ok := r.last()
		return ok && c.err == nil && c.data == want
	}, waitFor, tick, "content %q never delivered; calls: %s", want, r)
	c, _ := r.last()
	return c
}

// logDelay logs how long after since the last call came: what a test
// measured, for the record, never asserted.
func (r *recorder) logDelay(t testing.TB, what string, since time.Time) {
	t.Helper()
	if c, ok := r.last(); ok {
		t.Logf("%s: delivered %v after the change", what, c.at.Sub(since).Round(time.Microsecond))
	}
}

// waitErr waits until the last call reported an error matching target.
func (r *recorder) waitErr(t testing.TB, target error) error {
	t.Helper()
	require.Eventually(t, func() bool {
		c, ok := r.last()
		return ok && errors.Is(c.err, target)
	}, waitFor, tick, "no error matching %v; calls: %s", target, r)
	c, _ := r.last()
	return c.err
}

func (r *recorder) String() string {
	s := "["
	for i, c := range r.calls() {
		if i > 0 {
			s += ", "
		}
		if c.err != nil {
			s += "err(" + c.err.Error() + ")"
		} else {
			s += fmt.Sprintf("%s %q", c.op, c.data)
		}
	}
	return s + "]"
}

// testLogger sends the provider's log to the test's log, shown on failure.
func testLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// failLogger keeps the provider's log and shows it only if the test fails,
// for tests that run many watches.
func failLogger(t testing.TB) *slog.Logger {
	var mu sync.Mutex
	var buf bytes.Buffer
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		if t.Failed() {
			t.Log("provider log:\n" + buf.String())
		}
	})
	return slog.New(slog.NewTextHandler(lockedWriter{&mu, &buf}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// lockedBuffer is a buffer that a watch's goroutines may write to while the
// test reads it: a log, a child's output.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(string(p[:len(p)-1]))
	return len(p), nil
}

// watched creates a provider on path, reads it as a koanf user would, and
// watches it with a recorder until the test ends; the recorder is told of
// problems too (WithErrorCallbacks), as tests watch for them.
func watched(t testing.TB, path string, opts ...Option) (*File, *recorder) {
	t.Helper()
	f := Provider(path, append([]Option{WithLogger(testLogger(t)), WithErrorCallbacks(), traced(t)}, opts...)...)
	_, _ = f.ReadBytes()
	r := newRecorder(f)
	require.NoError(t, f.Watch(r.cb))
	t.Cleanup(func() { shutdown(t, f) })
	return f, r
}

// shutdown stops f's watch and waits for its goroutine.
func shutdown(t testing.TB, f *File) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	require.NoError(t, f.Shutdown(ctx))
}

func write(t testing.TB, path, data string) {
	t.Helper()
	require.NoError(t, os.WriteFile(path, []byte(data), 0o644))
}

// replace writes data to a temporary file beside path and renames it over
// path, as editors that save atomically do.
func replace(t testing.TB, path, data string) {
	t.Helper()
	require.NoError(t, replaceFile(path, data))
}

// replaceFile is replace for goroutines other than the test's.
func replaceFile(path, data string) error {
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp")
	if err := os.WriteFile(tmp, []byte(data), 0o644); err != nil {
		return err
	}
	return renameOver(tmp, path)
}

// renameOver renames from over to. Windows refuses to replace a file that
// someone has open (a reader in the test, or in the provider, unless the
// system honours its FILE_SHARE_DELETE), as Windows writers know: they try
// again, and so does this, for a while.
func renameOver(from, to string) error {
	err := os.Rename(from, to)
	for deadline := time.Now().Add(waitFor); err != nil && runtime.GOOS == "windows" &&
		errors.Is(err, fs.ErrPermission) && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
		err = os.Rename(from, to)
	}
	return err
}

// sentinel makes a last change and waits for it, so that everything the
// test did before has been processed: if the recorder shows nothing between
// the previous delivery and the sentinel, nothing was delivered for it.
func sentinel(t testing.TB, r *recorder, path string) {
	t.Helper()
	replace(t, path, "sentinel\n")
	r.waitContent(t, "sentinel\n")
}

// ctxWithCancel is context.WithCancel that cancels when the test ends.
func ctxWithCancel(t testing.TB) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	return ctx, cancel
}

// gate holds the goroutines that pass it until the test opens it, and tells
// the test when the first has arrived: a callback that blocks where the
// test wants it. It opens by itself when the test ends; a cleanup that
// waits for a callback held at it must release it first.
type gate struct {
	arrived, opened chan struct{}
	arrive, open    sync.Once
}

func newGate(t testing.TB) *gate {
	g := &gate{arrived: make(chan struct{}), opened: make(chan struct{})}
	t.Cleanup(g.release)
	return g
}

// pass waits at the gate until it opens.
func (g *gate) pass() {
	g.arrive.Do(func() { close(g.arrived) })
	<-g.opened
}

// reached waits until a goroutine is at the gate.
func (g *gate) reached(t testing.TB) {
	t.Helper()
	select {
	case <-g.arrived:
	case <-time.After(waitFor):
		t.Fatal("nothing reached the gate")
	}
}

// release opens the gate for good.
func (g *gate) release() { g.open.Do(func() { close(g.opened) }) }

// secondWatch watches path with a provider of its own, so that a test can wait
// until a change has been through the shared watcher: once the second watch has
// delivered it, a watch that were still running would have had it too.
func secondWatch(t testing.TB, path string) *recorder {
	t.Helper()
	_, r := watched(t, path, WithQuietWindow(0))
	return r
}

// contextFor is a context that ends after d.
func contextFor(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), d)
}

// hubCaps is what the process hub's backend can see: everything with
// inotify, nothing beyond the directory events with fsnotify's backend.
func hubCaps(t *testing.T) decide.Caps {
	t.Helper()
	n, err := events.ProcessHub.Subscribe()
	require.NoError(t, err)
	defer n.Close()
	return n.Caps()
}

// needCaps skips a test of what only a backend with want can do.
func needCaps(t *testing.T, want decide.Caps, what string) {
	t.Helper()
	got := hubCaps(t)
	if (want.Closes && !got.Closes) || (want.Ancestors && !got.Ancestors) || (want.Files && !got.Files) || (want.Opens && !got.Opens) {
		t.Skipf("the backend cannot see %s", what)
	}
}

// awaitSteady waits until count has returned the same number a few samples
// in a row, and returns it: watches are added and removed after a
// delivery, off the path to the callback, so a count taken right after one
// may catch them half done.
func awaitSteady(t *testing.T, count func() int) int {
	t.Helper()
	last, same := -1, 0
	require.Eventually(t, func() bool {
		n := count()
		if n == last {
			same++
		} else {
			last, same = n, 0
		}
		return same >= 3
	}, waitFor, 20*time.Millisecond)
	return last
}

// volume is a kubelet-style volume (see the kubevol package) that fails the
// test on any error.
type volume struct {
	t testing.TB
	v *kubevol.Volume
}

func newVolume(t testing.TB, dir string, payload map[string]string) *volume {
	t.Helper()
	v, err := kubevol.New(dir, payload)
	require.NoError(t, err)
	return &volume{t: t, v: v}
}

func (v *volume) path(key string) string { return v.v.Path(key) }

// update writes payload as kubelet's AtomicWriter does, and reports whether
// it wrote anything: an unchanged payload writes nothing.
func (v *volume) update(payload map[string]string) bool {
	v.t.Helper()
	wrote, err := v.v.Update(payload)
	require.NoError(v.t, err)
	return wrote
}

// swapRemoveCreate removes ..data and creates it again after pause, as the
// seed report saw.
func (v *volume) swapRemoveCreate(payload map[string]string, pause time.Duration) {
	v.t.Helper()
	require.NoError(v.t, v.v.SwapRemoveCreate(payload, pause))
}

func config(n int) map[string]string {
	return map[string]string{"config.yaml": fmt.Sprintf("generation: %d\n", n)}
}

// watchedFake watches path through scripted notifiers, with re-checks off so
// that only the notifier and the supervisor can make the provider read.
func watchedFake(t *testing.T, path string, opts ...Option) (*File, *recorder, *fakes) {
	t.Helper()
	fs := &fakes{}
	base := []Option{withNotifier(fs.new), withoutWriterProbe(), withBackoff(testBackoffMin, testBackoffMax), WithRecheckInterval(0)}
	f, r := watched(t, path, append(base, opts...)...)
	synctest.Wait()
	return f, r, fs
}

const testQuiet = 100 * time.Millisecond

// advance lets virtual time pass and waits for the watch to settle.
func advance(d time.Duration) {
	time.Sleep(d)
	synctest.Wait()
}

func assertNoRepeats(t *testing.T, contents []string) {
	t.Helper()
	for i := 1; i < len(contents); i++ {
		require.NotEqual(t, contents[i-1], contents[i], "delivery %d repeats the previous content", i)
	}
}

// setRecorder records a FileSet's callbacks, reading the set inside each
// as a koanf user would.
type setRecorder struct {
	s     *FileSet
	mu    sync.Mutex
	loads []map[string]any
	evs   []SetEvent
	errs  []error
}

func (r *setRecorder) cb(event any, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		r.errs = append(r.errs, err)
		return
	}
	m, rerr := r.s.Read()
	if rerr != nil {
		r.errs = append(r.errs, fmt.Errorf("Read in callback: %w", rerr))
		return
	}
	r.loads = append(r.loads, m)
	r.evs = append(r.evs, event.(SetEvent))
}

func (r *setRecorder) last() (map[string]any, SetEvent, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.loads) == 0 {
		return nil, SetEvent{}, 0
	}
	return r.loads[len(r.loads)-1], r.evs[len(r.evs)-1], len(r.loads)
}

func (r *setRecorder) errors() []error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]error(nil), r.errs...)
}

// wait waits until the last load satisfies ok.
func (r *setRecorder) wait(t *testing.T, ok func(m map[string]any) bool) map[string]any {
	t.Helper()
	require.Eventually(t, func() bool {
		m, _, n := r.last()
		return n > 0 && ok(m)
	}, waitFor, tick, "loads: %v, errors: %v", r.snapshot(), r.errors())
	m, _, _ := r.last()
	return m
}

func (r *setRecorder) snapshot() []map[string]any {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]map[string]any(nil), r.loads...)
}

func watchedSet(t *testing.T, s *FileSet) *setRecorder {
	t.Helper()
	_, _ = s.Read()
	r := &setRecorder{s: s}
	require.NoError(t, s.Watch(r.cb))
	t.Cleanup(func() {
		ctx, cancel := contextFor(waitFor)
		defer cancel()
		require.NoError(t, s.Shutdown(ctx))
	})
	return r
}

// watchedByEvents watches path with the re-check off.
func watchedByEvents(t *testing.T, path string, opts ...Option) (*File, *recorder) {
	t.Helper()
	return watched(t, path, append([]Option{WithRecheckInterval(0)}, opts...)...)
}

func waitErrs(t *testing.T, r *recorder, n int) []error {
	t.Helper()
	require.Eventually(t, func() bool { return len(r.errs()) >= n }, waitFor, tick, "calls: %s", r)
	return r.errs()
}

// realTempDir is a temporary directory with no symlink on its way (macOS's
// is under /var, a symlink to /private/var), for a test that names what is
// watched.
func realTempDir(t *testing.T) string {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	return dir
}

// onTheWay lists the directories a watch of a file in dir watches, from the
// root: dir and every directory above it, or, where the backend cannot
// watch that many (kqueue), dir only.
func onTheWay(t *testing.T, dir string) []string {
	if !hubCaps(t).Ancestors {
		return []string{dir}
	}
	return ancestors(dir)
}

// ancestors lists dir and every directory above it, from the root.
func ancestors(dir string) []string {
	var out []string
	for d := dir; ; d = filepath.Dir(d) {
		out = append([]string{d}, out...)
		if d == filepath.Dir(d) {
			return out
		}
	}
}

// yamlParser parses YAML as koanf's parsers/yaml does: this module
// requires no koanf module, and tests/koanf runs sets with koanf's own
// parsers.
type yamlParser = yamlparser.Parser
