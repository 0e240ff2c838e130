package live_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

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
