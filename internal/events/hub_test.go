package events

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/keepwatch/file/internal/decide"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// Tests that use a test hub run in a synctest bubble, and never touch the
// process hub: a hub's goroutines belong to the bubble they start in. The
// hub's work for providers, end to end, is tested in the root package.

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		os.Exit(code)
	}))
}

// waitFor is how long a test waits for something that should take
// milliseconds; it is generous so that a loaded 2-core machine never fails a
// correct test.
const waitFor = 10 * time.Second

const tick = 2 * time.Millisecond

// reportAll asks a watch for everything it can report.
const reportAll = decide.WatchSelf | decide.WatchNames | decide.WatchContent

// added drops the id an Add returned, for require.NoError.
func added(_ int, err error) error { return err }

func TestHubCountsDirectoryWatchesAndClosesWithTheLastSubscription(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		raw := &fakeBackends{}
		h := NewHub(raw.newBackend)
		s1, err := h.Subscribe()
		require.NoError(t, err)
		s2, err := h.Subscribe()
		require.NoError(t, err)
		w := raw.last()
		assert.Equal(t, 1, raw.calls())

		require.NoError(t, added(s1.Add("/a", reportAll)))
		require.NoError(t, added(s2.Add("/a", reportAll)))
		require.NoError(t, added(s2.Add("/b", reportAll)))
		assert.ElementsMatch(t, []string{"/a", "/b"}, w.watched())
		s1.Remove("/a")
		assert.ElementsMatch(t, []string{"/a", "/b"}, w.watched(), "s2 still needs /a")
		s2.Remove("/b")
		assert.ElementsMatch(t, []string{"/a"}, w.watched())

		require.NoError(t, s2.Close())
		require.NoError(t, s2.Close(), "Close is idempotent")
		assert.Empty(t, w.watched())
		assert.False(t, w.isClosedNow(), "s1 is still subscribed")
		require.NoError(t, s1.Close())
		assert.True(t, w.isClosedNow(), "the last subscription closes the watcher")

		s3, err := h.Subscribe()
		require.NoError(t, err)
		assert.Equal(t, 2, raw.calls(), "a new watcher when needed again")
		require.NoError(t, s3.Close())
	})
}

func TestHubDispatchesEventsByWantedPath(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := filepath.FromSlash // the paths as the OS spells them
		raw := &fakeBackends{}
		h := NewHub(raw.newBackend)
		a, _ := h.Subscribe()
		b, _ := h.Subscribe()
		defer a.Close()
		defer b.Close()
		require.NoError(t, added(a.Add(p("/vol"), reportAll)))
		a.Want(p("/vol/config.yaml"))
		a.Want(p("/vol/..data"))
		require.NoError(t, added(b.Add(p("/vol/..2026"), reportAll)))
		require.NoError(t, added(b.Add(p("/vol"), reportAll)))
		b.Want(p("/vol/other.yaml"))
		w := raw.last()

		queued := func(n Notifier) int { return len(n.(*subscription).events) }
		w.send(p("/vol/config.yaml"), decide.OpCreate)
		synctest.Wait()
		assert.Equal(t, 1, queued(a))
		assert.Equal(t, 0, queued(b), "same directory, another file")

		w.send(p("/vol/..data"), decide.OpCreate)
		w.send(p("/vol/..2026_new"), decide.OpCreate) // nobody's
		synctest.Wait()
		assert.Equal(t, 2, queued(a))
		assert.Equal(t, 0, queued(b))

		// An event on a watched directory itself reaches its watchers.
		w.send(p("/vol/..2026"), decide.OpRemove)
		synctest.Wait()
		assert.Equal(t, 2, queued(a))
		assert.Equal(t, 1, queued(b))

		// Forgotten paths are no longer dispatched.
		a.WantOnly(map[string]bool{p("/vol/..data"): true})
		w.send(p("/vol/config.yaml"), decide.OpWrite)
		w.send(p("/vol/..data"), decide.OpRemove) // not the event queued last: not merged
		synctest.Wait()
		assert.Equal(t, 3, queued(a))
	})
}

func TestASubscriptionThatFallsBehindGetsOneRescan(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := filepath.FromSlash // the paths as the OS spells them
		raw := &fakeBackends{}
		h := NewHub(raw.newBackend)
		s, _ := h.Subscribe()
		defer s.Close()
		require.NoError(t, added(s.Add(p("/vol"), reportAll)))
		for i := range 3 * SubscriptionBuffer {
			s.Want(fmt.Sprintf(p("/vol/f%d"), i))
		}
		s.Want(p("/vol/again"))
		for i := range 3 * SubscriptionBuffer {
			raw.last().send(fmt.Sprintf(p("/vol/f%d"), i), decide.OpWrite)
		}
		synctest.Wait()
		events := s.(*subscription).events
		require.Len(t, events, SubscriptionBuffer, "full, and the hub never blocked")
		for range SubscriptionBuffer - 1 {
			assert.False(t, (<-events).Has(decide.OpRescan))
		}
		assert.Equal(t, decide.Event{Op: decide.OpRescan}, <-events, "the last slot says events were lost")

		// Once drained, events flow again.
		raw.last().send(p("/vol/again"), decide.OpWrite)
		synctest.Wait()
		assert.Equal(t, p("/vol/again"), (<-events).Name)
	})
}

// A burst of the same event (a tool writing line by line: each write told
// by the file's watch and by its directory's) is merged into the copy
// still queued, as the kernel merges it: the queue does not fill, and the
// writer's close after the burst is not lost. An event unlike the last
// one queued, or one that comes after the queue was read, is queued, and
// so is every close (the count of openers).
func TestABurstOfTheSameEventIsMergedWhileQueued(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := filepath.FromSlash // the paths as the OS spells them
		raw := &fakeBackends{}
		h := NewHub(raw.newBackend)
		s, _ := h.Subscribe()
		defer s.Close()
		require.NoError(t, added(s.Add(p("/vol"), reportAll)))
		s.Want(p("/vol/config.yaml"))
		for range 10 * SubscriptionBuffer {
			raw.last().send(p("/vol/config.yaml"), decide.OpWrite)
		}
		raw.last().send(p("/vol/config.yaml"), decide.OpClose)
		raw.last().send(p("/vol/config.yaml"), decide.OpClose)
		raw.last().send(p("/vol/config.yaml"), decide.OpWrite)
		synctest.Wait()
		events := s.(*subscription).events
		want := []decide.Event{{Name: p("/vol/config.yaml"), Op: decide.OpWrite}, {Name: p("/vol/config.yaml"), Op: decide.OpClose},
			{Name: p("/vol/config.yaml"), Op: decide.OpClose}, {Name: p("/vol/config.yaml"), Op: decide.OpWrite}}
		require.Len(t, events, len(want))
		for _, w := range want {
			assert.Equal(t, w, <-events)
		}

		// Read, the same event is queued again.
		raw.last().send(p("/vol/config.yaml"), decide.OpWrite)
		synctest.Wait()
		assert.Equal(t, decide.Event{Name: p("/vol/config.yaml"), Op: decide.OpWrite}, <-events)
	})
}

// A file watched by itself and through its directory hears each change
// twice, on its own watch (with its id) and on its directory's: a burst
// alternates the two copies, and is merged a pair at a time. An event that
// is not a copy of the pair queued last is queued, whatever came before.
func TestABurstToAFileWatchedTwiceIsMergedAPairAtATime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := filepath.FromSlash // the paths as the OS spells them
		file, other := p("/vol/config.yaml"), p("/vol/other.yaml")
		raw := &fakeBackends{}
		h := NewHub(raw.newBackend)
		s, _ := h.Subscribe()
		defer s.Close()
		require.NoError(t, added(s.Add(p("/vol"), reportAll)))
		own, err := s.Add(file, reportAll)
		require.NoError(t, err)
		s.Want(file)
		s.Want(other)
		for range 10 * SubscriptionBuffer {
			raw.last().send(file, decide.OpWrite)
		}
		raw.last().send(file, decide.OpClose)
		raw.last().send(file, decide.OpClose)
		for _, o := range []decide.Op{decide.OpCreate, decide.OpRemove, decide.OpCreate} { // told once each: no pair
			raw.last().send(other, o)
		}
		raw.last().send(file, decide.OpWrite)
		synctest.Wait()
		events := s.(*subscription).events
		want := []decide.Event{{Name: file, Op: decide.OpWrite, Watch: own}, {Name: file, Op: decide.OpWrite},
			{Name: file, Op: decide.OpClose, Watch: own}, {Name: file, Op: decide.OpClose},
			{Name: file, Op: decide.OpClose, Watch: own}, {Name: file, Op: decide.OpClose},
			{Name: other, Op: decide.OpCreate}, {Name: other, Op: decide.OpRemove}, {Name: other, Op: decide.OpCreate},
			{Name: file, Op: decide.OpWrite, Watch: own}, {Name: file, Op: decide.OpWrite}}
		var got []decide.Event
		for len(events) > 0 {
			got = append(got, <-events)
		}
		assert.Equal(t, want, got)
	})
}

// Opens and closes are the count of a file's openers, and are never
// merged: the loop's own read opens the file, and a writer that opens it
// while that open is still queued is another opener, not the same event
// again; two readers' closes back to back are two closes.
func TestOpensAndClosesAreNeverMergedWhileQueued(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		file := filepath.FromSlash("/vol/config.yaml")
		raw := &fakeBackends{}
		h := NewHub(raw.newBackend)
		s, _ := h.Subscribe()
		defer s.Close()
		require.NoError(t, added(s.Add(filepath.Dir(file), reportAll)))
		require.NoError(t, added(s.Add(file, reportAll|decide.WatchOpens)))
		s.Want(file)
		ops := []decide.Op{decide.OpOpen, decide.OpOpen, decide.OpCloseNoWrite, decide.OpCloseNoWrite,
			decide.OpOpen, decide.OpOpen, decide.OpClose, decide.OpClose}
		for _, op := range ops {
			raw.last().sendSelf(file, op) // on the file's own watch alone, as the kernel tells opens
		}
		synctest.Wait()
		events := s.(*subscription).events
		var got []decide.Op
		for len(events) > 0 {
			got = append(got, (<-events).Op)
		}
		assert.Equal(t, ops, got)
	})
}

// appendJoin is filepath.Join, made without a string for the common case.
func TestAppendJoinIsJoin(t *testing.T) {
	sep := string(filepath.Separator)
	dirs := []string{sep, sep + "etc", sep + "etc" + sep + "app", "etc", sep + "etc" + sep, sep + "a" + sep + ".." + sep + "b", "", "."}
	names := []string{"config.yaml", "..data", "..2026_11_24", ".", "..", "", "a" + sep + "b", sep}
	for _, d := range dirs {
		for _, n := range names {
			assert.Equal(t, filepath.Join(d, n), string(appendJoin(nil, d, n)), "dir %q, name %q", d, n)
		}
	}
}

// fakeBackends is a backend factory for hub tests: it hands out backends
// whose events and failures the test makes.
type fakeBackends struct {
	mu   sync.Mutex
	caps decide.Caps // what the backends say they can see
	made []*fakeBackend
}

func (fb *fakeBackends) newBackend(h Handler) (Backend, error) {
	fb.mu.Lock()
	defer fb.mu.Unlock()
	b := &fakeBackend{h: h, caps: fb.caps, ids: make(map[string]int), watches: make(map[int]bool)}
	fb.made = append(fb.made, b)
	return b, nil
}

func (fb *fakeBackends) calls() int {
	fb.mu.Lock()
	defer fb.mu.Unlock()
	return len(fb.made)
}

func (fb *fakeBackends) last() *fakeBackend {
	fb.mu.Lock()
	defer fb.mu.Unlock()
	return fb.made[len(fb.made)-1]
}

// fakeBackend is a scripted backend. A path's id is its own, unless the
// test makes two paths one inode with sameInode. The test's goroutine
// stands in for the backend's: send calls the handler itself.
type fakeBackend struct {
	h    Handler
	caps decide.Caps

	mu       sync.Mutex
	ids      map[string]int // the id each path gets
	watches  map[int]bool   // ids watched
	next     int
	isClosed bool
}

// sameInode makes path other lead to the inode of path a, as a bind mount
// does.
func (b *fakeBackend) sameInode(a, other string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.ids[other] = b.idLocked(a)
}

func (b *fakeBackend) idLocked(path string) int {
	id, ok := b.ids[path]
	if !ok {
		b.next++
		id = b.next
		b.ids[path] = id
	}
	return id
}

func (b *fakeBackend) Add(path string, _ decide.WatchKind) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	id := b.idLocked(path)
	b.watches[id] = true
	return id, nil
}

func (b *fakeBackend) Remove(id int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.watches, id)
}

func (b *fakeBackend) Caps() decide.Caps { return b.caps }

func (b *fakeBackend) Inode(int) (decide.WatchedInode, bool) { return decide.WatchedInode{}, false }
func (b *fakeBackend) Sync()                                 {}

func (b *fakeBackend) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.isClosed = true
	return nil
}

func (b *fakeBackend) isClosedNow() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.isClosed
}

// watched lists the paths whose inode is watched, sorted.
func (b *fakeBackend) watched() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for p, id := range b.ids {
		if b.watches[id] {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// sendSelf tells o of path on its own watch alone, as the kernel tells
// opens (only a file's own watch asks for them).
func (b *fakeBackend) sendSelf(path string, o decide.Op) {
	b.mu.Lock()
	id, ok := b.ids[path]
	ok = ok && b.watches[id]
	b.mu.Unlock()
	if ok {
		b.h.Events([]RawEvent{{ID: id, Op: o}})
	}
}

// send reports an event on path, as the kernel does: on the watch of its
// directory, named, and on its own watch if it has one.
func (b *fakeBackend) send(path string, o decide.Op) {
	b.mu.Lock()
	var batch []RawEvent
	if id, ok := b.ids[path]; ok && b.watches[id] {
		batch = append(batch, RawEvent{ID: id, Op: o})
	}
	if id, ok := b.ids[filepath.Dir(path)]; ok && b.watches[id] {
		batch = append(batch, RawEvent{ID: id, Name: filepath.Base(path), Op: o})
	}
	b.mu.Unlock()
	if len(batch) > 0 {
		b.h.Events(batch)
	}
}
