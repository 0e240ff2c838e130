package file

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/keepwatch/file/internal/decide"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Lifecycle: Watch, Unwatch and callbacks, from any goroutine.

func TestUnwatchIsIdempotentAndWatchWorksAgain(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	write(t, path, "v1\n")
	f := Provider(path, WithLogger(testLogger(t)))
	require.NoError(t, f.Unwatch(), "Unwatch before Watch")

	for i := range 3 {
		r := newRecorder(f)
		require.NoError(t, f.Watch(r.cb))
		want := strings.Repeat("v", i+2) + "\n"
		replace(t, path, want)
		r.waitContent(t, want)
		require.NoError(t, f.Unwatch())
		require.NoError(t, f.Unwatch())
	}
}

// Unwatch does not wait for a running callback; Shutdown does, for as long
// as its context allows.
func TestUnwatchReturnsWhileACallbackRunsAndShutdownWaitsForIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "config.yaml")
		write(t, path, "v1\n")
		fs := &fakes{}
		f := Provider(path, withNotifier(fs.new), withoutWriterProbe(), WithRecheckInterval(0), WithLogger(testLogger(t)))
		_, _ = f.ReadBytes()
		g := newGate(t)
		var returned atomic.Bool
		require.NoError(t, f.Watch(func(any, error) {
			g.pass()
			returned.Store(true)
		}))
		synctest.Wait()
		replace(t, path, "v2\n")
		send(fs.last(), path, decide.OpCreate)
		g.reached(t)

		require.NoError(t, f.Unwatch())
		assert.False(t, returned.Load(), "Unwatch returned while the callback runs")
		assert.Equal(t, ModeStopped, f.Stats().Mode)

		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		assert.ErrorIs(t, f.Shutdown(ctx), context.DeadlineExceeded, "bounded by its context")

		shutdownDone := make(chan error, 1)
		go func() { shutdownDone <- f.Shutdown(context.Background()) }()
		synctest.Wait()
		select {
		case <-shutdownDone:
			t.Fatal("Shutdown returned while the callback runs")
		default:
		}
		g.release()
		require.NoError(t, <-shutdownDone)
		assert.True(t, returned.Load())
	})
}

// No callback starts after Unwatch returns, while changes keep coming. One
// may have started just before and still be on its way in: the callback
// cannot tell the two apart, so one is allowed for; a watch that went on
// would deliver the many changes made afterwards.
func TestNoCallbackAfterUnwatchReturns(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	write(t, path, "v0\n")
	w := secondWatch(t, path)
	for round := range 20 {
		f := Provider(path, WithLogger(testLogger(t)), WithQuietWindow(0))
		_, _ = f.ReadBytes()
		var calls atomic.Int32
		require.NoError(t, f.Watch(func(any, error) { calls.Add(1) }))
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
					assert.NoError(t, replaceFile(path, strings.Repeat("w", i%50+round)+"\n"))
				}
			}
		})
		// Unwatch at a different point of the stream each round.
		require.Eventually(t, func() bool { return calls.Load() >= int32(round%4) }, waitFor, tick)
		require.NoError(t, f.Unwatch())
		n := calls.Load()
		// Changes go on, and reach the second watch, which is still watching.
		seen := len(w.contents())
		require.Eventually(t, func() bool { return len(w.contents()) >= seen+3 }, waitFor, tick)
		close(stop)
		wg.Wait()
		sentinel(t, w, path)
		shutdown(t, f)
		require.LessOrEqual(t, calls.Load(), n+1, "round %d: callbacks after Unwatch returned", round)
	}
}

func TestUnwatchFromInsideTheCallback(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	write(t, path, "v1\n")
	f := Provider(path, WithLogger(testLogger(t)))
	_, _ = f.ReadBytes()

	var calls atomic.Int32
	returned := make(chan error, 1)
	require.NoError(t, f.Watch(func(any, error) {
		calls.Add(1)
		returned <- f.Unwatch()
	}))
	replace(t, path, "v2\n")
	require.NoError(t, <-returned)

	// The watch is over: a further change fires nothing, and a new watch
	// works and delivers it.
	replace(t, path, "v3\n")
	r := newRecorder(f)
	require.NoError(t, f.Watch(r.cb))
	defer shutdown(t, f)
	r.waitContent(t, "v3\n")
	assert.Equal(t, int32(1), calls.Load())
}

// A callback that calls Unwatch then Watch hands over to a new watch, whose
// callbacks never overlap the old one, and neither deadlocks on the other,
// even when the callback also unwatches the watch it has just started.
func TestRewatchFromInsideTheCallback(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "config.yaml")
		write(t, path, "v1\n")
		fs := &fakes{}
		f := Provider(path, withNotifier(fs.new), withoutWriterProbe(), WithRecheckInterval(0), WithLogger(testLogger(t)))
		_, _ = f.ReadBytes()

		const rounds = 5
		var running, deliveries atomic.Int32
		var overlap atomic.Bool
		done := make(chan struct{})
		var finish sync.Once
		var cb func(any, error)
		cb = func(_ any, err error) {
			if running.Add(1) > 1 {
				overlap.Store(true)
			}
			defer running.Add(-1)
			if err != nil || deliveries.Add(1) >= rounds {
				finish.Do(func() { close(done) })
				return
			}
			assert.NoError(t, f.Unwatch())
			assert.NoError(t, f.Watch(cb))
			// The new watch's first read finds new content. Let it run as far
			// as it can while this callback has not returned.
			assert.NoError(t, replaceFile(path, strings.Repeat("n", int(deliveries.Load())+1)+"\n"))
			synctest.Wait()
			assert.NoError(t, f.Unwatch(), "Unwatch of the new watch from the old callback")
			assert.NoError(t, f.Watch(cb))
		}
		require.NoError(t, f.Watch(cb))
		synctest.Wait()
		replace(t, path, "v2\n")
		send(fs.last(), path, decide.OpCreate)
		<-done
		require.NoError(t, f.Unwatch())
		assert.Equal(t, int32(rounds), deliveries.Load())
		assert.False(t, overlap.Load(), "two callbacks ran at once")
	})
}

// A callback that calls Watch while Shutdown waits for it starts a watch
// that Shutdown stops too: none outlives Shutdown.
func TestShutdownAlsoStopsAWatchItsWaitedForCallbackStarted(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	write(t, path, "v1\n")
	f := Provider(path, WithLogger(testLogger(t)))
	_, _ = f.ReadBytes()
	var first atomic.Bool
	cb := func(any, error) {}
	g := newGate(t)
	require.NoError(t, f.Watch(func(_ any, err error) {
		if err != nil || !first.CompareAndSwap(false, true) {
			return
		}
		g.pass()
		assert.NoError(t, f.Watch(cb), "the watch was stopped: this starts another")
	}))
	replace(t, path, "v2\n")
	g.reached(t)

	done := make(chan struct{})
	go func() { shutdown(t, f); close(done) }()
	require.Eventually(t, func() bool { return f.Stats().Mode == ModeStopped }, waitFor, tick, "Shutdown stopped the watch")
	g.release()
	<-done
	assert.Equal(t, ModeStopped, f.Stats().Mode, "no watch outlives Shutdown")
}

func TestWatchWithContextStopsWhenTheContextIsDone(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	write(t, path, "v1\n")
	f := Provider(path, WithLogger(testLogger(t)))
	_, _ = f.ReadBytes()
	ctx, cancel := ctxWithCancel(t)
	r := newRecorder(f)
	require.NoError(t, f.WatchWithContext(ctx, r.cb))
	replace(t, path, "v2\n")
	r.waitContent(t, "v2\n")

	cancel()
	// A new watch may start at once; the old one ends on its own.
	r2 := newRecorder(f)
	require.Eventually(t, func() bool { return f.Watch(r2.cb) == nil }, waitFor, tick)
	defer shutdown(t, f)
	replace(t, path, "v3\n")
	r2.waitContent(t, "v3\n")
	assert.Equal(t, []string{"v2\n"}, r.contents())
}

func TestWatchUnwatchCyclesLeakNoFileDescriptors(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	write(t, path, "v1\n")
	f := Provider(path, WithLogger(testLogger(t)))
	cycle := func() {
		require.NoError(t, f.Watch(func(any, error) {}))
		require.NoError(t, f.Unwatch())
	}
	cycle() // the runtime's own descriptors (netpoll) open on first use
	shutdown(t, f)
	before := countFDs(t)
	for range 300 {
		cycle()
	}
	shutdown(t, f) // the last watch's goroutine has exited
	// Another test's watch ending late may close descriptors meanwhile;
	// none of this test's may stay open.
	require.Eventually(t, func() bool { return countFDs(t) <= before }, waitFor, tick, "descriptors leaked")
}

// Any goroutine may use the provider while a watch runs: Watch, Unwatch,
// ReadBytes and a callback that unwatches or rewatches itself, all at once,
// round after round. Callbacks never overlap and none runs after the Unwatch
// that ends the rounds has returned.
func TestConcurrentUseIsRaceFree(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	write(t, path, "v1\n")
	w := secondWatch(t, path)
	f := Provider(path, WithLogger(testLogger(t)), WithQuietWindow(time.Millisecond))
	var (
		wg              sync.WaitGroup
		inside, calls   atomic.Int32
		overlap, closed atomic.Bool
	)
	var cb func(any, error)
	cb = func(_ any, err error) {
		if inside.Add(1) > 1 {
			overlap.Store(true)
		}
		defer inside.Add(-1)
		if closed.Load() {
			t.Error("callback after the final Shutdown returned")
		}
		switch calls.Add(1) % 3 {
		case 0:
			_ = f.Unwatch()
		case 1:
			_, _ = f.ReadBytes()
			_ = f.Stats()
		case 2:
			_ = f.Unwatch()
			_ = f.Watch(cb)
		}
	}
	// Half a second of it, and at least a few callbacks, however loaded
	// the machine.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	wg.Go(func() {
		defer cancel()
		time.Sleep(500 * time.Millisecond)
		for start := time.Now(); calls.Load() < 3 && time.Since(start) < waitFor; {
			time.Sleep(tick)
		}
	})
	for i := range 8 {
		wg.Go(func() {
			for n := 0; ctx.Err() == nil; n++ {
				switch i {
				case 0, 4:
					_ = f.Watch(cb)
				case 1, 5:
					if n%4 == 0 {
						_ = f.Unwatch()
					}
				case 2, 6:
					_, _ = f.ReadBytes()
					_ = f.Stats()
				case 7:
					_ = f.Watch(cb)
					_ = f.Unwatch()
				case 3:
					assert.NoError(t, replaceFile(path, fmt.Sprintf("v%d-%d\n", i, n)))
				}
			}
		})
	}
	wg.Wait()
	if calls.Load() == 0 {
		// On a loaded machine the churn can leave no watch alive long
		// enough to be called back (the unwatchers stop each within
		// microseconds). A watch left alone is called for the next change,
		// so the rounds above were not run against a provider that never
		// calls back.
		_ = f.Watch(cb)
		n := 0
		require.Eventually(t, func() bool {
			n++
			assert.NoError(t, replaceFile(path, fmt.Sprintf("after-%d\n", n)))
			return calls.Load() > 0
		}, waitFor, 50*time.Millisecond)
	}
	shutdown(t, f) // no callback runs, none will
	closed.Store(true)
	assert.False(t, overlap.Load(), "callbacks overlapped")
	assert.Positive(t, calls.Load())
	// A change the second watch has delivered has been through the shared
	// watcher: a watch still running would have been called for it.
	sentinel(t, w, path)
}

// Watch starts only on a path that resolves, as koanf's stock provider's
// does: code written for it asks Watch whether the file is there
// (tomtom215/lyrebirdaudio-go's TestWatchFailedToStart removes the file and
// its directory, and waits for Watch's error).

// unresolvedPaths are paths that do not resolve, each made in dir, and the
// error their lookup fails with.
var unresolvedPaths = []struct {
	name string
	make func(t *testing.T, dir string) string
	want error
}{
	{"a missing file", func(t *testing.T, dir string) string {
		return filepath.Join(dir, "config.yaml")
	}, fs.ErrNotExist},
	{"a missing directory", func(t *testing.T, dir string) string {
		return filepath.Join(dir, "conf", "config.yaml")
	}, fs.ErrNotExist},
	{"a dangling symlink", func(t *testing.T, dir string) string {
		symlink(t, "gone.yaml", filepath.Join(dir, "config.yaml"))
		return filepath.Join(dir, "config.yaml")
	}, fs.ErrNotExist},
	{"a ConfigMap key whose ..data is missing", func(t *testing.T, dir string) string {
		symlink(t, filepath.Join("..data", "config.yaml"), filepath.Join(dir, "config.yaml"))
		return filepath.Join(dir, "config.yaml")
	}, fs.ErrNotExist},
	{"a file on the way", func(t *testing.T, dir string) string {
		write(t, filepath.Join(dir, "conf"), "not a directory\n")
		return filepath.Join(dir, "conf", "config.yaml")
	}, syscall.ENOTDIR},
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("no symlinks here: %v", err)
	}
}

func TestWatchOnAPathThatDoesNotResolveFails(t *testing.T) {
	for _, tc := range unresolvedPaths {
		t.Run(tc.name, func(t *testing.T) {
			path := tc.make(t, t.TempDir())
			f := Provider(path, WithLogger(testLogger(t)))
			r := newRecorder(f)
			err := f.Watch(r.cb)
			require.Error(t, err)
			assertUnresolved(t, err, path, tc.want)
			assert.Equal(t, ModeStopped, f.Stats().Mode, "nothing watched")
		})
	}
}

// assertUnresolved checks Watch's error for a path that does not resolve:
// an *fs.PathError naming the path as given, holding the lookup's errno,
// so that the older os.IsNotExist holds too, as it does for the stock
// provider's error.
func assertUnresolved(t *testing.T, err error, path string, want error) {
	t.Helper()
	require.ErrorIs(t, err, want)
	var pe *fs.PathError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "watch", pe.Op)
	assert.Equal(t, path, pe.Path)
	var errno syscall.Errno
	assert.ErrorAs(t, pe.Err, &errno, "the errno itself, not wrapped")
	assert.Equal(t, errors.Is(want, fs.ErrNotExist), os.IsNotExist(err), "os.IsNotExist")
	if errors.Is(want, fs.ErrNotExist) {
		assert.EqualError(t, err, "watch "+path+": "+errno.Error())
	}
}

// The error names the path as the provider was given it, relative or not.
func TestWatchOnAMissingRelativePathNamesItAsGiven(t *testing.T) {
	t.Chdir(t.TempDir())
	err := Provider("conf/app.yaml").Watch(func(any, error) {})
	assert.EqualError(t, err, "watch conf/app.yaml: "+syscall.ENOENT.Error())
	assert.True(t, os.IsNotExist(err))
}

// A failed Watch leaves nothing behind: Unwatch and Shutdown have nothing
// to stop, and once the file is there Watch starts as on any provider.
func TestAFailedWatchLeavesNothingRunning(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "conf")
	path := filepath.Join(dir, "config.yaml")
	f := Provider(path, WithLogger(testLogger(t)), WithErrorCallbacks())
	r := newRecorder(f)
	require.ErrorIs(t, f.Watch(r.cb), fs.ErrNotExist)
	require.NoError(t, f.Unwatch())
	ctx, cancel := contextFor(waitFor)
	defer cancel()
	require.NoError(t, f.Shutdown(ctx))
	assert.Zero(t, f.Stats().Restarts)

	require.NoError(t, os.Mkdir(dir, 0o755))
	write(t, path, "v1\n")
	require.NoError(t, f.Watch(r.cb), "no watch left running: not ErrAlreadyWatching")
	t.Cleanup(func() { shutdown(t, f) })
	replace(t, path, "v2\n")
	r.waitContent(t, "v2\n")
	assert.Equal(t, []string{"v2\n"}, r.contents(), "v1 is the baseline; the failed Watch delivered nothing")
	assert.Empty(t, r.errs())
}

// A watch that runs is ErrAlreadyWatching's, whatever became of the path:
// the stock provider checks in that order too.
func TestWatchAgainOnAPathGoneSaysAlreadyWatching(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	write(t, path, "v1\n")
	f, r := watched(t, path)
	require.NoError(t, os.Remove(path))
	r.waitErr(t, fs.ErrNotExist)
	assert.ErrorIs(t, f.Watch(func(any, error) {}), ErrAlreadyWatching)
}

// Once Watch has started, the path going away is waited for, as ever: see
// also TestRemovedFileIsReportedOnceAndDeliveredWhenBack and
// TestRemovedDirectoryIsWatchedFromItsParent.
func TestAPathGoneRightAfterWatchIsWaitedFor(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "conf")
	path := filepath.Join(dir, "config.yaml")
	require.NoError(t, os.Mkdir(dir, 0o755))
	write(t, path, "v1\n")
	_, r := watched(t, path)
	require.NoError(t, os.RemoveAll(dir))
	r.waitErr(t, fs.ErrNotExist)
	require.NoError(t, os.Mkdir(dir, 0o755))
	write(t, path, "v2\n")
	c := r.waitContent(t, "v2\n")
	assert.Equal(t, fsnotify.Create, c.op)
}

// WithWaitForPath keeps the watch that starts before its file: each path
// that does not resolve is reported once, and delivered once it does.
func TestWithWaitForPathAWatchStartsAndWaits(t *testing.T) {
	for _, tc := range unresolvedPaths {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := tc.make(t, dir)
			_, r := watched(t, path, WithWaitForPath(), withBackoff(time.Hour, time.Hour))
			r.waitErr(t, tc.want)

			require.NoError(t, os.RemoveAll(dir))
			require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
			replace(t, path, "v1\n")
			c := r.waitContent(t, "v1\n")
			assert.Equal(t, fsnotify.Create, c.op)
			// The path's problem is reported once. Between the removal and
			// the directories made again it may have been another (no such
			// file, where it was "not a directory"), reported once too.
			errs := r.errs()
			assert.ErrorIs(t, errs[0], tc.want)
			assert.LessOrEqual(t, len(errs), 2, "each problem reported once: %s", r)
			for i := 1; i < len(errs); i++ {
				assert.NotEqual(t, errs[i-1].Error(), errs[i].Error(), "each problem reported once: %s", r)
			}
		})
	}
}

// A set's directory that does not resolve fails Watch, for Set and Glob
// alike, and so does a file a Set names; an empty glob is an empty set.
func TestSetWatchOnAMissingDirectoryFails(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "conf.d")
	for _, s := range []*FileSet{
		Set(dir, []string{"a.yaml"}, yamlParser{}),
		Glob(filepath.Join(dir, "*.yaml"), yamlParser{}),
	} {
		err := s.Watch(func(any, error) {})
		assertUnresolved(t, err, dir, fs.ErrNotExist)
		assert.Equal(t, ModeStopped, s.Stats().Mode, "nothing watched")
	}
}

func TestSetWatchOnAMissingNamedFileFails(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "a.yaml"), "a: 1\n")
	s := Set(dir, []string{"a.yaml", "b.yaml"}, yamlParser{})
	assertUnresolved(t, s.Watch(func(any, error) {}), filepath.Join(dir, "b.yaml"), fs.ErrNotExist)

	// In a kubelet volume, a key missing from the payload ..data leads to.
	v := newVolume(t, filepath.Join(t.TempDir(), "config"), map[string]string{"a.yaml": "a: 1\n"})
	s = Set(v.v.Dir, []string{"a.yaml", "b.yaml"}, yamlParser{})
	assertUnresolved(t, s.Watch(func(any, error) {}), filepath.Join(v.v.Dir, "b.yaml"), fs.ErrNotExist)
}

func TestGlobWatchWithNoFileMatchingStarts(t *testing.T) {
	dir := t.TempDir()
	s := Glob(filepath.Join(dir, "*.yaml"), yamlParser{}, WithLogger(testLogger(t)))
	r := watchedSet(t, s)
	write(t, filepath.Join(dir, "a.yaml"), "a: 1\n")
	r.wait(t, func(m map[string]any) bool { return m["a"] == 1 })
}

func TestSetWithWaitForPathWaitsForItsDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "conf.d")
	s := Set(dir, []string{"a.yaml"}, yamlParser{}, WithWaitForPath(), WithErrorCallbacks(), WithLogger(testLogger(t)))
	r := watchedSet(t, s)
	require.Eventually(t, func() bool { return len(r.errors()) > 0 }, waitFor, tick)
	require.NoError(t, os.Mkdir(dir, 0o755))
	replace(t, filepath.Join(dir, "a.yaml"), "a: 1\n")
	r.wait(t, func(m map[string]any) bool { return m["a"] == 1 })
	assert.Len(t, r.errors(), 1, "reported once")
	assert.ErrorIs(t, r.errors()[0], fs.ErrNotExist)
}
