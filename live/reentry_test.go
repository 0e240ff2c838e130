package live_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/keepwatch/file"
	"github.com/keepwatch/file/live"
	"github.com/knadh/koanf/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// returns fails the test if fn has not returned within waitFor: a call
// that deadlocks.
func returns(t *testing.T, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	select {
	case <-done:
	case <-time.After(waitFor):
		t.Fatalf("%s did not return", what)
	}
}

// A subscriber may cancel itself (a one-shot), subscribe another and
// close the config; OnError may close it. Each returns at once: they once
// waited for the reload that called them, for good, and the config never
// reloaded again. (What a subscriber is told comes on channels: the test
// fails from its own goroutine, not from the watch's.)
func TestASubscriberOrOnErrorMayCancelSubscribeAndClose(t *testing.T) {
	path := filepath.Join(t.TempDir(), "app.yaml")
	write(t, path, "a: 1\n")
	f := provider(t, path)
	c := start(t, &live.Config{Load: loadYAML(f), Watch: []live.Watcher{f}, Logger: testLogger(t)})

	once, later := make(chan int, 4), make(chan int, 4)
	var cancel func()
	cancel = c.Subscribe(func(_, k *koanf.Koanf) {
		cancel() // a one-shot
		c.Subscribe(func(_, k *koanf.Koanf) { later <- k.Int("a") })
		once <- k.Int("a")
	})
	write(t, path, "a: 2\n")
	assert.Equal(t, 2, receive(t, once))
	write(t, path, "a: 3\n")
	assert.Equal(t, 3, receive(t, later), "the subscriber added from inside is told of the next")
	assert.Empty(t, once, "the one-shot was told once")

	closed := make(chan struct{})
	c.Subscribe(func(_, _ *koanf.Koanf) {
		assert.NoError(t, c.Close())
		close(closed)
	})
	write(t, path, "a: 4\n")
	receive(t, closed) // not if Close waited for this reload

	path2 := filepath.Join(t.TempDir(), "app.yaml")
	write(t, path2, "a: 1\n")
	f2 := provider(t, path2)
	var c2 *live.Config
	told := make(chan struct{})
	c2 = start(t, &live.Config{Load: loadYAML(f2), Watch: []live.Watcher{f2}, Logger: testLogger(t),
		OnError: func(error) {
			assert.NoError(t, c2.Close())
			close(told)
		}})
	write(t, path2, "a: [\n")
	receive(t, told) // not if Close waited for this reload
}

// Close does not wait for a reload under way, as its doc says, and
// Shutdown waits for it no longer than its context: both once waited for
// the reload's lock, whatever the context said.
func TestCloseAndShutdownDoNotWaitOnAReloadUnderWay(t *testing.T) {
	for _, end := range []string{"Close", "Shutdown"} {
		t.Run(end, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "app.yaml")
			write(t, path, "a: 1\n")
			f := provider(t, path)
			c := start(t, &live.Config{Load: loadYAML(f), Watch: []live.Watcher{f}, Logger: testLogger(t)})
			entered, release := make(chan struct{}), make(chan struct{})
			c.Subscribe(func(_, _ *koanf.Koanf) {
				close(entered)
				<-release
			})
			defer close(release)
			write(t, path, "a: 2\n")
			receive(t, entered)
			if end == "Close" {
				returns(t, "Close during a reload", func() { require.NoError(t, c.Close()) })
				return
			}
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			defer cancel()
			returns(t, "Shutdown during a reload", func() {
				assert.ErrorIs(t, c.Shutdown(ctx), context.DeadlineExceeded, "the reload is still under way")
			})
		})
	}
}

// receive returns what ch gives within waitFor.
func receive[V any](t *testing.T, ch <-chan V) V {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(waitFor):
		t.Fatal("nothing came")
		var zero V
		return zero
	}
}

// A subscriber cancelled from another goroutine while a publication is
// being told is not called after its cancel returns: the publication's
// list of subscribers was taken before, and the cancel no longer waits
// for the reload.
func TestNoCallBeginsAfterItsCancelReturns(t *testing.T) {
	path := filepath.Join(t.TempDir(), "app.yaml")
	write(t, path, "a: 1\n")
	f := provider(t, path)
	c := start(t, &live.Config{Load: loadYAML(f), Watch: []live.Watcher{f}, Logger: testLogger(t)})

	entered, release, last := make(chan struct{}), make(chan struct{}), make(chan int, 4)
	var first sync.Once
	c.Subscribe(func(_, _ *koanf.Koanf) { first.Do(func() { close(entered); <-release }) })
	var cancelled atomic.Bool
	var late atomic.Int32
	cancel := c.Subscribe(func(_, _ *koanf.Koanf) {
		if cancelled.Load() {
			late.Add(1)
		}
	})
	c.Subscribe(func(_, k *koanf.Koanf) { last <- k.Int("a") })

	write(t, path, "a: 2\n")
	receive(t, entered)
	cancel()
	cancelled.Store(true)
	close(release)
	assert.Equal(t, 2, receive(t, last), "the publication was told to the subscribers after it")
	assert.Zero(t, late.Load(), "a subscriber called after its cancel returned")
}

// A Shutdown while Start loads waits for it, as long as its context lets
// it, and stops what the Start watched; given up, it leaves the Start to
// stop, and nothing is watched after.
func TestShutdownDuringStartStopsWhatItWatches(t *testing.T) {
	for _, wait := range []bool{true, false} {
		t.Run(fmt.Sprintf("waits %v", wait), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "app.yaml")
			write(t, path, "a: 1\n")
			f := provider(t, path)
			entered, release := make(chan struct{}), make(chan struct{})
			var first sync.Once
			c := &live.Config{Watch: []live.Watcher{f}, Logger: testLogger(t), Load: func(k *koanf.Koanf) error {
				first.Do(func() { close(entered); <-release })
				return loadYAML(f)(k)
			}}
			started := make(chan error, 1)
			go func() { started <- c.Start() }()
			receive(t, entered)

			ctx, cancel := context.WithCancel(context.Background())
			if !wait {
				ctx, cancel = context.WithTimeout(context.Background(), 20*time.Millisecond)
			}
			defer cancel()
			shut := make(chan error, 1)
			go func() { shut <- c.Shutdown(ctx) }()
			if wait {
				select {
				case err := <-shut:
					t.Fatalf("Shutdown returned (%v) while Start loaded", err)
				case <-time.After(20 * time.Millisecond): // it cannot be waited on for "never"
				}
				close(release)
				require.NoError(t, receive(t, started))
				require.NoError(t, receive(t, shut))
			} else {
				assert.ErrorIs(t, receive(t, shut), context.DeadlineExceeded)
				close(release)
				assert.EqualError(t, receive(t, started), "keepwatch: config "+path+": closed while it started")
			}
			assert.Equal(t, file.ModeStopped, f.Stats().Mode, "nothing watched after the Shutdown and the Start")
		})
	}
}
