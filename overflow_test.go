package file

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/fsnotify/fsnotify"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// maxQueuedEvents is the kernel's inotify queue length; a burst longer than
// it overflows a queue nobody reads.
func maxQueuedEvents(t *testing.T) int {
	b, err := os.ReadFile("/proc/sys/fs/inotify/max_queued_events")
	if err != nil {
		t.Skip("no inotify here")
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	require.NoError(t, err)
	return n
}

// flood creates n files in dir.
func flood(t *testing.T, dir string, n int) {
	t.Helper()
	for i := range n {
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("flood-%06d", i)))
		require.NoError(t, err)
		require.NoError(t, f.Close())
	}
}

// blockingRecorder is a recorder whose first delivery blocks until release.
func blockingRecorder(f *File) (r *recorder, cb func(any, error), entered, release chan struct{}) {
	r = newRecorder(f)
	entered, release = make(chan struct{}), make(chan struct{})
	var once sync.Once
	cb = func(event any, err error) {
		if err == nil {
			once.Do(func() {
				close(entered)
				<-release
			})
		}
		r.cb(event, err)
	}
	return r, cb, entered, release
}

// floodWhileBlocked watches a file, holds the callback of its first update,
// creates more files beside it than the kernel's queue holds, updates it
// again, lets the callback go, and waits for the final content.
func floodWhileBlocked(t *testing.T, opts ...Option) *recorder {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "config.yaml")
	write(t, path, "v1\n")
	f := Provider(path, append([]Option{WithLogger(testLogger(t))}, opts...)...)
	_, _ = f.ReadBytes()
	r, cb, entered, release := blockingRecorder(f)
	require.NoError(t, f.Watch(cb))
	t.Cleanup(func() { require.NoError(t, f.Unwatch()) })
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	t.Cleanup(unblock) // runs before the Unwatch above

	replace(t, path, "v2\n")
	<-entered
	flood(t, dir, maxQueuedEvents(t)+2000)
	replace(t, path, "final\n")
	unblock()
	r.waitContent(t, "final\n")
	return r
}

// A watch with its own inotify instance, whose only reader is stuck in a
// slow callback, overflows the kernel's queue for real. It survives: the
// overflow is reported, the watch re-armed, and the final content delivered.
func TestARealQueueOverflowIsSurvived(t *testing.T) {
	r := floodWhileBlocked(t, withNotifier(newFsnotify))
	var overflowed bool
	for _, err := range r.errs() {
		overflowed = overflowed || errors.Is(err, fsnotify.ErrEventOverflow)
	}
	assert.True(t, overflowed, "the overflow is reported: %s", r)
}

// Through the shared hub, the same slow callback cannot overflow the queue:
// the hub keeps reading, and the stuck session only loses events it then
// rescans for.
func TestASlowCallbackCannotOverflowTheSharedQueue(t *testing.T) {
	r := floodWhileBlocked(t)
	assert.Empty(t, r.errs(), "nothing overflowed")
}
