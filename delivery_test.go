package file

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/keepwatch/file/internal/decide"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Code written for koanf's stock provider, run unchanged against keepwatch:
// the one-line swap must be invisible, except that the watch no longer
// dies.

var wrapperOutage = flag.Duration("wrapper.outage", time.Second,
	"how long the restart wrapper test keeps the policy's directory gone for good")

// policyLoader is the loader of the first report keepwatch answers (an
// authz policy loader that restarts its watch, kept outside this
// repository with the project's other seeds), as written for koanf's stock
// provider: on an error
// callback it takes the watch for dead, waits a second, watches again (a
// fresh provider, or the same one again), and reloads; it never unwatches
// the provider it gave up on.
type policyLoader struct {
	path  string
	pause time.Duration // a second, in the report
	fresh bool          // restart with a fresh provider, or Watch the same one again

	mu       sync.Mutex
	provider *File
	stopped  bool
	loads    map[string]int // content → times loaded
	restarts int
	wg       sync.WaitGroup // the restarts, so that the test can wait for them
}

func newPolicyLoader(t *testing.T, path string, fresh bool) *policyLoader {
	l := &policyLoader{path: path, pause: time.Second, fresh: fresh, loads: make(map[string]int)}
	f := Provider(path) // default options, as the report's code has
	if _, err := f.ReadBytes(); err != nil {
		t.Fatal(err)
	}
	require.NoError(t, l.watch(f))
	t.Cleanup(l.wg.Wait)
	return l
}

func (l *policyLoader) watch(f *File) error {
	err := f.Watch(func(_ any, err error) {
		if err != nil {
			l.wg.Go(func() { l.restart(f) })
			return
		}
		l.reload(f)
	})
	l.mu.Lock()
	defer l.mu.Unlock()
	l.provider = f
	return err
}

func (l *policyLoader) restart(dead *File) {
	time.Sleep(l.pause)
	l.mu.Lock()
	if l.stopped {
		l.mu.Unlock()
		return
	}
	l.restarts++
	l.mu.Unlock()
	f := dead
	if l.fresh {
		f = Provider(l.path)
	}
	_ = l.watch(f)
	l.reload(f)
}

func (l *policyLoader) reload(f *File) {
	b, err := f.ReadBytes()
	if err != nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.loads[string(b)]++
}

// stop is the loader's Unwatch: of the provider it watches now.
func (l *policyLoader) stop() {
	l.mu.Lock()
	l.stopped = true
	f := l.provider
	l.mu.Unlock()
	_ = f.Unwatch()
}

func (l *policyLoader) loaded(content string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.loads[content]
}

func (l *policyLoader) waitLoaded(t *testing.T, content string) {
	t.Helper()
	require.Eventually(t, func() bool { return l.loaded(content) > 0 }, waitFor, tick, "%q never loaded", content)
}

// The report's restart wrapper, through a short outage, a permanent loss of
// the policy's directory and its own unwatch: one reload per change, no
// restart (there is no error to restart on), none after the unwatch, and
// the goroutines and kernel watches of the process flat however long the
// directory stays gone. make test keeps it gone 1 s;
// -wrapper.outage=30s measures the figures in the closing note.
func TestAStockRestartWrapperWorksUnchanged(t *testing.T) {
	for _, fresh := range []bool{true, false} {
		name := "the same provider watched again"
		if fresh {
			name = "a fresh provider"
		}
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "policy")
			policy := func(n int) map[string]string {
				return map[string]string{"policy.yaml": fmt.Sprintf("roles: {alice: [read]}\ngeneration: %d\n", n)}
			}
			v := newVolume(t, dir, policy(0))
			l := newPolicyLoader(t, v.path("policy.yaml"), fresh)
			w := secondWatch(t, v.path("policy.yaml"))
			gen := 0
			update := func() string {
				gen++
				v.update(policy(gen))
				want := policy(gen)["policy.yaml"]
				l.waitLoaded(t, want)
				return want
			}
			for range 3 {
				update()
			}

			// The directory is gone for 400 ms, then back.
			require.NoError(t, os.RemoveAll(dir))
			time.Sleep(400 * time.Millisecond)
			v = newVolume(t, dir, policy(100))
			l.waitLoaded(t, policy(100)["policy.yaml"])
			update()

			// Gone for good: nothing grows while it is.
			require.NoError(t, os.RemoveAll(dir))
			w.waitErr(t, os.ErrNotExist)
			// The kernel drops the removed directories' watches at once; the
			// watches on what is left come as each watch takes in the loss.
			// Count from when they have.
			awaitSteady(t, countKernelWatches)
			var goroutines, watches []int
			for start := time.Now(); time.Since(start) < *wrapperOutage; time.Sleep(100 * time.Millisecond) {
				goroutines = append(goroutines, runtime.NumGoroutine())
				watches = append(watches, countKernelWatches())
			}
			t.Logf("directory gone for %s: goroutines %d..%d, kernel watches %d..%d, over %d samples",
				*wrapperOutage, minOf(goroutines), maxOf(goroutines), minOf(watches), maxOf(watches), len(watches))
			assert.Equal(t, minOf(watches), maxOf(watches), "kernel watches grew: %v", watches)
			assert.LessOrEqual(t, maxOf(goroutines)-minOf(goroutines), 1, "goroutines grew: %v", goroutines)

			v = newVolume(t, dir, policy(200))
			l.waitLoaded(t, policy(200)["policy.yaml"])
			last := update()

			// Its own unwatch ends it: a change after it is not loaded.
			l.stop()
			v.update(policy(300))
			w.waitContent(t, policy(300)["policy.yaml"])
			sentinelVolume(t, v, w)
			assert.Zero(t, l.loaded(policy(300)["policy.yaml"]), "loaded after the loader's unwatch")

			l.mu.Lock()
			defer l.mu.Unlock()
			assert.Zero(t, l.restarts, "nothing told the loader its watch had died")
			for content, n := range l.loads {
				assert.Equal(t, 1, n, "loaded %d times: %q", n, content)
			}
			assert.Equal(t, 1, l.loads[last])
			t.Logf("%d changes, %d loads, each once; restarts %d", gen+2, len(l.loads), l.restarts)
		})
	}
}

// sentinelVolume makes one more update and waits for the second watch to have
// it: anything still on its way for the updates before has arrived.
func sentinelVolume(t *testing.T, v *volume, w *recorder) {
	t.Helper()
	v.update(map[string]string{"policy.yaml": "sentinel\n"})
	w.waitContent(t, "sentinel\n")
}

func minOf(xs []int) int {
	m := xs[0]
	for _, x := range xs {
		m = min(m, x)
	}
	return m
}

func maxOf(xs []int) int {
	m := xs[0]
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}

// By default a problem is logged and counted, never handed to the
// callback: code written for the stock provider would take it for the end
// of the watch.
func TestByDefaultProblemsAreLoggedAndCountedNotCalledBack(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	write(t, path, "v1\n")
	logs := &logRecords{}
	f := Provider(path, WithLogger(slog.New(logs)))
	_, _ = f.ReadBytes()
	r := newRecorder(f)
	require.NoError(t, f.Watch(r.cb))
	defer shutdown(t, f)

	require.NoError(t, os.Remove(path))
	require.Eventually(t, func() bool { return f.Stats().Errors == 1 }, waitFor, tick)
	assert.ErrorIs(t, f.Stats().LastError, os.ErrNotExist)
	write(t, path, "v2\n")
	r.waitContent(t, "v2\n")
	assert.Empty(t, r.errs(), "no error callback")
	assert.Equal(t, []string{"WARN keepwatch: file problem", "INFO keepwatch: file back"}, logs.at(slog.LevelInfo))
}

// A healthy watch is as silent as the stock provider at the levels an
// application logs: its start and every update are at DEBUG.
func TestAHealthyWatchIsSilent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	write(t, path, "v0\n")
	logs := &logRecords{}
	f := Provider(path, WithLogger(slog.New(logs)))
	_, _ = f.ReadBytes()
	r := newRecorder(f)
	require.NoError(t, f.Watch(r.cb))
	defer shutdown(t, f)
	for i := 1; i <= 9; i++ {
		want := fmt.Sprintf("v%d\n", i)
		write(t, path, want)
		r.waitContent(t, want)
	}
	// Each delivery's record is written once its callback has returned.
	require.Eventually(t, func() bool { return len(logs.at(slog.LevelDebug)) >= 10 }, waitFor, tick,
		"a start and nine updates, at DEBUG: %v", logs.at(slog.LevelDebug))
	assert.Len(t, logs.at(slog.LevelDebug), 10, "a start and nine updates, at DEBUG")
	assert.Empty(t, logs.at(slog.LevelInfo))
}

// Unwatch cannot deadlock where the stock provider's could not: called
// under a lock the running callback waits for, or from a shutdown the
// callback waits for.
func TestUnwatchCannotDeadlockWithTheCallback(t *testing.T) {
	unwatchPromptly := func(t *testing.T, f *File, then func()) {
		t.Helper()
		done := make(chan error, 1)
		go func() { done <- f.Unwatch(); then() }()
		select {
		case err := <-done:
			require.NoError(t, err)
		case <-time.After(waitFor):
			t.Fatal("Unwatch deadlocked with the callback")
		}
	}
	t.Run("under the callback's lock", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "config.yaml")
		write(t, path, "v1\n")
		f := Provider(path, WithLogger(testLogger(t)))
		_, _ = f.ReadBytes()
		var mu sync.Mutex
		entered := make(chan struct{})
		var once sync.Once
		require.NoError(t, f.Watch(func(any, error) {
			once.Do(func() { close(entered) })
			mu.Lock() // the application's state
			defer mu.Unlock()
		}))
		mu.Lock()
		write(t, path, "v2\n")
		<-entered
		unwatchPromptly(t, f, func() {})
		mu.Unlock()
		shutdown(t, f)
	})
	t.Run("from a shutdown the callback waits for", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "config.yaml")
		write(t, path, "v1\n")
		f := Provider(path, WithLogger(testLogger(t)))
		_, _ = f.ReadBytes()
		shuttingDown, shutDown := make(chan struct{}), make(chan struct{})
		require.NoError(t, f.Watch(func(any, error) {
			close(shuttingDown)
			<-shutDown // the application finishes its shutdown first
		}))
		write(t, path, "v2\n")
		<-shuttingDown
		unwatchPromptly(t, f, func() { close(shutDown) })
		shutdown(t, f)
	})
}

// Another goroutine reading the file (a health check, a second k.Load, a
// debug endpoint) takes no callback away: the watch fires for each content
// it has not delivered, whoever else has read it.
func TestAReadBytesPollerSwallowsNoCallback(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	write(t, path, "v0\n")
	f, r := watched(t, path)
	ctx, cancel := context.WithCancel(context.Background())
	var polls atomic.Int64
	var wg sync.WaitGroup
	wg.Go(func() {
		for ctx.Err() == nil {
			_, _ = f.ReadBytes()
			polls.Add(1)
		}
	})
	defer func() { cancel(); wg.Wait() }()
	var want []string
	for i := 1; i <= 20; i++ {
		content := fmt.Sprintf("v%d\n", i)
		write(t, path, content) // in place: the poller reads it at once
		r.waitContent(t, content)
		want = append(want, content)
	}
	assert.Equal(t, want, r.contents())
	assert.Positive(t, polls.Load())
}

// logRecords is a slog.Handler that keeps the level and message of each
// record.
type logRecords struct {
	mu   sync.Mutex
	recs []slog.Record
}

func (l *logRecords) Enabled(context.Context, slog.Level) bool { return true }

func (l *logRecords) WithAttrs([]slog.Attr) slog.Handler { return l }

func (l *logRecords) WithGroup(string) slog.Handler { return l }

func (l *logRecords) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.recs = append(l.recs, r)
	return nil
}

// at returns "LEVEL message" of each record at level or above.
func (l *logRecords) at(level slog.Level) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, r := range l.recs {
		if r.Level >= level {
			out = append(out, r.Level.String()+" "+r.Message)
		}
	}
	return out
}

// attr returns the value of the attribute key of the last record whose
// message is msg, and whether there is one.
func (l *logRecords) attr(msg, key string) (string, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, r := range slices.Backward(l.recs) {
		if r.Message != msg {
			continue
		}
		var v string
		var found bool
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == key {
				v, found = a.Value.String(), true
			}
			return !found
		})
		return v, found
	}
	return "", false
}

// The log holds one record per state change: not one per raw event, and
// not one per retry of the same problem. What goes well is at DEBUG; what
// goes wrong at WARN, and its end at INFO.
func TestLogHasOneRecordPerStateChange(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "config.yaml")
		write(t, path, "v1\n")
		logs := &logRecords{}
		_, r, fs := watchedFake(t, path, WithLogger(slog.New(logs)))
		assert.Equal(t, []string{"DEBUG keepwatch: watch started"}, logs.at(slog.LevelDebug))

		// A burst of events, one delivery.
		n := fs.last()
		for i := range 20 {
			replace(t, path, fmt.Sprintf("v%d\n", i+2))
		}
		for range 20 {
			send(n, path, decide.OpCreate)
			send(n, path, decide.OpAttrib)
		}
		advance(time.Second)
		assert.Equal(t, []string{"DEBUG keepwatch: watch started", "DEBUG keepwatch: update delivered"},
			logs.at(slog.LevelDebug), "calls: %s", r)
		assert.Empty(t, logs.at(slog.LevelInfo), "a healthy watch says nothing at INFO")

		// The watch breaks and stays broken for five attempts: one warning,
		// then one record when it is re-armed.
		fs.set(func(fs *fakes) {
			fs.newErrs = slices.Repeat([]error{syscall.EIO}, 4)
		})
		n.fail(syscall.EIO)
		advance(10 * testBackoffMax)
		assert.Equal(t, []string{
			"WARN keepwatch: watch interrupted",
			"INFO keepwatch: watch re-armed",
		}, logs.at(slog.LevelInfo))
		assert.Len(t, logs.at(slog.LevelDebug), 8, "each retry at debug level: %v", logs.at(slog.LevelDebug))

		// Missing, then back.
		_ = os.Remove(path)
		send(fs.last(), path, decide.OpRemove)
		advance(time.Second)
		write(t, path, "v9\n")
		send(fs.last(), path, decide.OpCreate)
		advance(time.Second)
		assert.Equal(t, []string{
			"WARN keepwatch: watch interrupted",
			"INFO keepwatch: watch re-armed",
			"WARN keepwatch: file problem",
			"INFO keepwatch: file back",
		}, logs.at(slog.LevelInfo))
	})
}
