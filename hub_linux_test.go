package file

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/keepwatch/file/internal/decide"
	"github.com/keepwatch/file/internal/events"

	"github.com/fsnotify/fsnotify"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
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

// maxEventsPerRead is how many events a reader of the instance can take
// out of the kernel's queue in one read before it blocks handing them on:
// fsnotify reads 64 KiB at a time, 4096 events of 16 bytes. A reader that
// wakes late, on a loaded machine, takes that many, and a burst must be
// longer than the queue by as much to overflow it whenever the reader woke.
const maxEventsPerRead = 4096

// flood makes n events that watches of path report, whatever they ask
// for: the mode of path changed (its own watch's, or its directory's for
// an entry), turn about with a name in its directory renamed to another
// and back (the directory's), so that the kernel cannot merge them (it
// merges an event with an identical one not yet read, and each rename has
// a cookie of its own). Renames rather than files made and removed: on
// ext4 each new file's inode is searched for among those recently freed,
// and thousands of them cost seconds of the test's time.
func flood(t *testing.T, path string, n int) {
	t.Helper()
	dir := filepath.Dir(path)
	names := [2]string{filepath.Join(dir, "flood.tmp"), filepath.Join(dir, "flood2.tmp")}
	require.NoError(t, os.WriteFile(names[0], nil, 0o644))
	for i := range n {
		switch {
		case i%2 == 0:
			require.NoError(t, os.Chmod(path, os.FileMode(0o644|(i/2%2)<<4)))
		default:
			from := i / 2 % 2
			require.NoError(t, os.Rename(names[from], names[1-from]))
		}
	}
}

// floodWhileBlocked watches a file, holds the callback of its first update,
// makes more events for it than the kernel's queue holds (and whatever more
// does), updates it again, lets the callback go, and waits for the final
// content.
func floodWhileBlocked(t *testing.T, more func(path string), opts ...Option) *recorder {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "config.yaml")
	write(t, path, "v1\n")
	f := Provider(path, append([]Option{WithLogger(testLogger(t)), WithErrorCallbacks()}, opts...)...)
	_, _ = f.ReadBytes()
	r := newRecorder(f)
	var first atomic.Bool
	g := newGate(t)
	require.NoError(t, f.Watch(func(event any, err error) {
		if err == nil && first.CompareAndSwap(false, true) {
			g.pass()
		}
		r.cb(event, err)
	}))
	t.Cleanup(func() { g.release(); shutdown(t, f) })

	replace(t, path, "v2\n")
	g.reached(t)
	flood(t, path, maxQueuedEvents(t)+maxEventsPerRead+2000)
	if more != nil {
		more(path)
	}
	replace(t, path, "final\n")
	g.release()
	// The last content delivered, whatever came after it: a private
	// notifier's overflow may be read after the final content was.
	require.Eventually(t, func() bool {
		c := r.contents()
		return len(c) > 0 && c[len(c)-1] == "final\n"
	}, waitFor, tick, "final content never delivered; calls: %s", r)
	return r
}

// A watch with its own inotify instance, whose only reader is stuck in a
// slow callback, overflows the kernel's queue for real. It survives: the
// overflow is reported, the watch re-armed, and the final content delivered.
func TestARealQueueOverflowIsSurvived(t *testing.T) {
	r := floodWhileBlocked(t, nil, withNotifier(newPrivateNotifier))
	// The final content may be found before the overflow is read: events
	// queued before it already show that the file changed.
	require.Eventually(t, func() bool {
		return slices.ContainsFunc(r.errs(), func(err error) bool { return errors.Is(err, fsnotify.ErrEventOverflow) })
	}, waitFor, tick, "the overflow is reported: %s", r)
	contents := r.contents()
	assert.Equal(t, "final\n", contents[len(contents)-1])
}

// Through the shared hub, the same slow callback cannot overflow the queue:
// the hub keeps reading, drops what nobody wants, and the stuck session
// only loses events it then rescans for.
func TestASlowCallbackCannotOverflowTheSharedQueue(t *testing.T) {
	before := events.ProcessHub.Overflows()
	r := floodWhileBlocked(t, func(path string) {
		for i := range 2000 { // and events nobody wants, in the watched directory
			write(t, filepath.Join(filepath.Dir(path), fmt.Sprintf("other-%04d", i)), "")
		}
	})
	if *backendFlag != "fsnotify" {
		// fsnotify's reader hands events on one at a time, through a
		// channel, and on Linux this flood can outrun it (it did in
		// make test-fsnotify): the overflow is then a rescan, and what
		// holds is that nothing is reported.
		assert.Equal(t, before, events.ProcessHub.Overflows(), "the kernel's queue overflowed")
	}
	assert.Empty(t, r.errs(), "nothing reported")
}

// A real overflow of the production backend's queue: the hub is held up
// (as a process too busy to read would be) while more events than the
// kernel queues are made; the sessions rescan, and the final content
// arrives without an error.
func TestARealOverflowOfTheInotifyQueueIsRescanned(t *testing.T) {
	h := privateHub(t)
	path := filepath.Join(t.TempDir(), "config.yaml")
	write(t, path, "v1\n")
	_, r := watchedByEvents(t, path, withNotifier(h.Subscribe))
	queued := func(fd int) int {
		n, err := unix.IoctlGetInt(fd, unix.TIOCINQ)
		require.NoError(t, err)
		return n
	}
	require.True(t, h.WithInotify(func(fd int) { // the backend's goroutine stops at the next dispatch: the kernel's queue fills
		flood(t, path, 2*maxQueuedEvents(t)) // what it read before it stopped, and more than the queue holds
		replace(t, path, "final\n")
		require.GreaterOrEqual(t, queued(fd), maxQueuedEvents(t)*unix.SizeofInotifyEvent, "the kernel's queue is full")
	}))
	require.Eventually(t, func() bool {
		n := -1
		h.WithInotify(func(fd int) { n = queued(fd) })
		return n == 0
	}, waitFor, tick, "the backend read all, the overflow notice last")
	r.waitContent(t, "final\n")
	// The flood's events on the file may have had it read, final, before
	// the overflow's notice, read last, was handed on.
	require.Eventually(t, func() bool { return h.Overflows() > 0 }, waitFor, tick, "the kernel's queue overflowed")
	assert.Empty(t, r.errs(), "an overflow is lost events, not a broken watch")
}

// kernelWatches counts the watches the kernel holds for h's inotify
// instance, from /proc/self/fdinfo; 0 when h has no backend.
func kernelWatches(t *testing.T, h *events.Hub) int {
	t.Helper()
	n := 0
	h.WithInotify(func(fd int) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/self/fdinfo/%d", fd))
		require.NoError(t, err)
		n = strings.Count(string(b), "inotify wd:")
	})
	return n
}

// privateHub is a hub of the test's own on the kernel's inotify, so that
// its watches can be counted.
func privateHub(t *testing.T) *events.Hub {
	h := events.NewHub(events.NewInotifyBackend)
	t.Cleanup(func() {
		assert.Zero(t, kernelWatches(t, h), "no kernel watch outlives the last watch")
	})
	return h
}

// privateNotifier is a notifier with an fsnotify watcher of its own and no
// hub: its only reader is the session, so a session stuck in a callback
// lets the kernel's queue overflow, as each of koanf's stock providers
// does. It hands on the events the session wants, as the hub does.
type privateNotifier struct {
	w      *fsnotify.Watcher
	events chan decide.Event
	errors chan error
	done   chan struct{}
	wg     sync.WaitGroup

	mu    sync.Mutex
	dirs  map[string]bool
	wants map[string]bool
}

func newPrivateNotifier() (events.Notifier, error) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	p := &privateNotifier{w: w, events: make(chan decide.Event), errors: make(chan error), done: make(chan struct{}),
		dirs: make(map[string]bool), wants: make(map[string]bool)}
	p.wg.Go(p.forward)
	return p, nil
}

// forward hands on events and errors, waiting for the session to take each.
func (p *privateNotifier) forward() {
	for {
		select {
		case ev, ok := <-p.w.Events:
			if !ok {
				return
			}
			if !p.wanted(filepath.Clean(ev.Name)) {
				continue
			}
			select {
			case p.events <- decide.Event{Name: ev.Name, Op: events.FsnotifyOp(ev.Op)}:
			case <-p.done:
				return
			}
		case err, ok := <-p.w.Errors:
			if !ok {
				return
			}
			select {
			case p.errors <- err:
			case <-p.done:
				return
			}
		}
	}
}

func (p *privateNotifier) wanted(name string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.wants[name] || p.dirs[name]
}

func (p *privateNotifier) Add(dir string, _ decide.WatchKind) (int, error) {
	if err := p.w.Add(dir); err != nil {
		return 0, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.dirs[dir] = true
	return 0, nil
}

func (p *privateNotifier) Remove(dir string) {
	_ = p.w.Remove(dir)
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.dirs, dir)
}

func (p *privateNotifier) Want(path string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.wants[path] = true
}

func (p *privateNotifier) WantOnly(keep map[string]bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for path := range p.wants {
		if !keep[path] {
			delete(p.wants, path)
		}
	}
}

func (p *privateNotifier) Caps() decide.Caps                     { return decide.Caps{} }
func (p *privateNotifier) Inode(int) (decide.WatchedInode, bool) { return decide.WatchedInode{}, false }
func (p *privateNotifier) Sync()                                 {}
func (p *privateNotifier) Events() <-chan decide.Event           { return p.events }
func (p *privateNotifier) Errors() <-chan error                  { return p.errors }

func (p *privateNotifier) Close() error {
	close(p.done)
	err := p.w.Close()
	p.wg.Wait()
	return err
}
