package file

import (
	"context"
	"fmt"
	"github.com/keepwatch/file/internal/decide"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

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
		f := Provider(path, withNotifier(fs.new), WithRecheckInterval(0), WithLogger(testLogger(t)))
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
	w := witness(t, path)
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
		// Changes go on, and reach the witness, which is still watching.
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
		f := Provider(path, withNotifier(fs.new), WithRecheckInterval(0), WithLogger(testLogger(t)))
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
	w := witness(t, path)
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
	shutdown(t, f) // no callback runs, none will
	closed.Store(true)
	assert.False(t, overlap.Load(), "callbacks overlapped")
	assert.Positive(t, calls.Load())
	// A change the witness has delivered has been through the shared
	// watcher: a watch still running would have been called for it.
	sentinel(t, w, path)
}
