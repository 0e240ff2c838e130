package file

import (
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/keepwatch/file/internal/decide"

	"github.com/fsnotify/fsnotify"
	"github.com/keepwatch/file/internal/osfile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Tests that use a test hub run in a synctest bubble, and never touch the
// process hub: a hub's goroutines belong to the bubble they start in.

// hubFiles is how many providers TestManyProvidersShareOneInotifyInstance
// runs: make test runs 2,000 (10,000 cost ten seconds under the race
// detector); make soak runs 10,000.
var hubFiles = flag.Int("hub.files", 2000, "providers for TestManyProvidersShareOneInotifyInstance, a multiple of 100")

func TestManyProvidersShareOneInotifyInstance(t *testing.T) {
	before := countInotify(t)
	root := t.TempDir()
	dirs, perDir := *hubFiles/100, 100 // 100 files to a directory
	quiet := slog.New(slog.DiscardHandler)
	var files []*File
	var recs []*recorder
	var paths []string
	for d := range dirs {
		dir := filepath.Join(root, fmt.Sprintf("d%03d", d))
		require.NoError(t, os.Mkdir(dir, 0o755))
		for i := range perDir {
			paths = append(paths, filepath.Join(dir, fmt.Sprintf("f%03d.yaml", i)))
			write(t, paths[len(paths)-1], "v1\n")
		}
	}
	for _, path := range paths {
		f := Provider(path, WithLogger(quiet))
		_, err := f.ReadBytes()
		require.NoError(t, err)
		r := newRecorder(f)
		require.NoError(t, f.Watch(r.cb))
		files, recs = append(files, f), append(recs, r)
	}
	defer func() {
		for _, f := range files {
			shutdown(t, f)
		}
		assert.Equal(t, before, countInotify(t), "the last watch's end closes the instance")
	}()
	assert.Equal(t, before+1, countInotify(t), "one inotify instance for %d providers", len(files))

	// They all work: change one file in every directory, and each of those
	// is delivered, to its own provider only.
	for d := range dirs {
		i := d*perDir + d%perDir
		replace(t, files[i].t.path, fmt.Sprintf("v2 of %d\n", i))
	}
	for d := range dirs {
		i := d*perDir + d%perDir
		recs[i].waitContent(t, fmt.Sprintf("v2 of %d\n", i))
	}
	for i, r := range recs {
		if i%perDir != (i/perDir)%perDir {
			require.Empty(t, r.calls(), "provider %d fired for another file", i)
		}
	}
}

func TestAHubFaultReArmsItOnceAndEveryProviderReReads(t *testing.T) {
	for _, fault := range []struct {
		name   string
		inject func(b *fakeBackend)
	}{
		{"error", func(b *fakeBackend) { b.fail(os.ErrInvalid) }},
		{"overflow reported as an error", func(b *fakeBackend) { b.fail(fsnotify.ErrEventOverflow) }},
		{"events closed", func(b *fakeBackend) { b.fail(errEventsClosed) }},
	} {
		t.Run(fault.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				raw := &fakeBackends{}
				h := newHub(raw.newBackend)
				var paths []string
				var recs []*recorder
				for _, d := range []string{t.TempDir(), t.TempDir()} {
					for i := range 3 {
						path := filepath.Join(d, fmt.Sprintf("c%d.yaml", i))
						write(t, path, "v1\n")
						_, r := watched(t, path, withNotifier(h.subscribe),
							withBackoff(testBackoffMin, testBackoffMax), WithRecheckInterval(0))
						paths, recs = append(paths, path), append(recs, r)
					}
				}
				synctest.Wait()
				require.Equal(t, 1, raw.calls())
				assert.Len(t, raw.last().watched(), 2)

				for _, p := range paths {
					write(t, p, "v2 of "+p+"\n") // lost with the fault
				}
				fault.inject(raw.last())
				synctest.Wait()
				for _, r := range recs {
					require.Len(t, r.errs(), 1)
					assert.ErrorIs(t, r.errs()[0], ErrWatchInterrupted)
				}

				advance(testBackoffMin)
				assert.Equal(t, 2, raw.calls(), "one new watcher for all six")
				assert.Len(t, raw.last().watched(), 2)
				for i, r := range recs {
					assert.Equal(t, []string{"v2 of " + paths[i] + "\n"}, r.contents())
				}
			})
		})
	}
}

func TestHubCountsDirectoryWatchesAndClosesWithTheLastSubscription(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		raw := &fakeBackends{}
		h := newHub(raw.newBackend)
		s1, err := h.subscribe()
		require.NoError(t, err)
		s2, err := h.subscribe()
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

		s3, err := h.subscribe()
		require.NoError(t, err)
		assert.Equal(t, 2, raw.calls(), "a new watcher when needed again")
		require.NoError(t, s3.Close())
	})
}

func TestHubDispatchesEventsByWantedPath(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := filepath.FromSlash // the paths as the OS spells them
		raw := &fakeBackends{}
		h := newHub(raw.newBackend)
		a, _ := h.subscribe()
		b, _ := h.subscribe()
		defer a.Close()
		defer b.Close()
		require.NoError(t, added(a.Add(p("/vol"), reportAll)))
		a.Want(p("/vol/config.yaml"))
		a.Want(p("/vol/..data"))
		require.NoError(t, added(b.Add(p("/vol/..2026"), reportAll)))
		require.NoError(t, added(b.Add(p("/vol"), reportAll)))
		b.Want(p("/vol/other.yaml"))
		w := raw.last()

		queued := func(n notifier) int { return len(n.(*subscription).events) }
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
		a.Forget(map[string]bool{p("/vol/..data"): true})
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
		h := newHub(raw.newBackend)
		s, _ := h.subscribe()
		defer s.Close()
		require.NoError(t, added(s.Add(p("/vol"), reportAll)))
		for i := range 3 * subBuffer {
			s.Want(fmt.Sprintf(p("/vol/f%d"), i))
		}
		s.Want(p("/vol/again"))
		for i := range 3 * subBuffer {
			raw.last().send(fmt.Sprintf(p("/vol/f%d"), i), decide.OpWrite)
		}
		synctest.Wait()
		events := s.(*subscription).events
		require.Len(t, events, subBuffer, "full, and the hub never blocked")
		for range subBuffer - 1 {
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
// one queued, or one that comes after the queue was read, is queued.
func TestABurstOfTheSameEventIsMergedWhileQueued(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := filepath.FromSlash // the paths as the OS spells them
		raw := &fakeBackends{}
		h := newHub(raw.newBackend)
		s, _ := h.subscribe()
		defer s.Close()
		require.NoError(t, added(s.Add(p("/vol"), reportAll)))
		s.Want(p("/vol/config.yaml"))
		for range 10 * subBuffer {
			raw.last().send(p("/vol/config.yaml"), decide.OpWrite)
		}
		raw.last().send(p("/vol/config.yaml"), decide.OpClose)
		raw.last().send(p("/vol/config.yaml"), decide.OpClose)
		raw.last().send(p("/vol/config.yaml"), decide.OpWrite)
		synctest.Wait()
		events := s.(*subscription).events
		want := []decide.Event{{Name: p("/vol/config.yaml"), Op: decide.OpWrite}, {Name: p("/vol/config.yaml"), Op: decide.OpClose}, {Name: p("/vol/config.yaml"), Op: decide.OpWrite}}
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
		h := newHub(raw.newBackend)
		s, _ := h.subscribe()
		defer s.Close()
		require.NoError(t, added(s.Add(p("/vol"), reportAll)))
		own, err := s.Add(file, reportAll)
		require.NoError(t, err)
		s.Want(file)
		s.Want(other)
		for range 10 * subBuffer {
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
			{Name: other, Op: decide.OpCreate}, {Name: other, Op: decide.OpRemove}, {Name: other, Op: decide.OpCreate},
			{Name: file, Op: decide.OpWrite, Watch: own}, {Name: file, Op: decide.OpWrite}}
		var got []decide.Event
		for len(events) > 0 {
			got = append(got, <-events)
		}
		assert.Equal(t, want, got)
	})
}

// A provider stuck in a slow callback holds up nobody else sharing the hub,
// and when it is released it rescans and delivers the final content.
func TestASlowCallbackDelaysOnlyItsOwnProvider(t *testing.T) {
	dir := t.TempDir()
	slowPath, fastPath := filepath.Join(dir, "slow.yaml"), filepath.Join(dir, "fast.yaml")
	write(t, slowPath, "s0\n")
	write(t, fastPath, "f0\n")

	slow := Provider(slowPath, WithLogger(testLogger(t)))
	_, _ = slow.ReadBytes()
	var got atomic.Value
	var first atomic.Bool
	g := newGate(t)
	require.NoError(t, slow.Watch(func(_ any, err error) {
		if err != nil {
			return
		}
		if first.CompareAndSwap(false, true) {
			g.pass()
		}
		b, _ := slow.ReadBytes()
		got.Store(string(b))
	}))
	t.Cleanup(func() { g.release(); shutdown(t, slow) })
	_, fast := watched(t, fastPath)

	replace(t, slowPath, "s1\n")
	g.reached(t)
	for i := range 10 * subBuffer {
		replace(t, slowPath, fmt.Sprintf("s%d\n", i+2))
		if i%subBuffer == 0 {
			want := fmt.Sprintf("f%d\n", i+1)
			replace(t, fastPath, want)
			fast.waitContent(t, want)
		}
	}
	g.release()
	want := fmt.Sprintf("s%d\n", 10*subBuffer+1)
	require.Eventually(t, func() bool { v, _ := got.Load().(string); return v == want }, waitFor, tick)
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

// hears reports whether a subscription of the hub wants the events of
// path, and a watch covers the directory path is in now, so that a writer
// of the file there is heard from its first write on. A watch the hub still
// counts may be of a directory deleted since, whose drop the backend has
// yet to hand on: the backend says which inode each watch is of. Where it
// cannot tell (fsnotify), nothing is heard for sure.
func (h *hub) hears(path string) bool {
	dir := filepath.Dir(path)
	info, err := os.Stat(dir)
	if err != nil {
		return false
	}
	dev, ino := osfile.ID(info)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.names[path] == nil || h.cur == nil {
		return false
	}
	for id, w := range h.watches {
		if len(w.paths[dir]) == 0 {
			continue
		}
		if of, ok := h.cur.b.Inode(id); ok && !of.Gone && of.Dev == dev && of.Ino == ino {
			return true
		}
	}
	return false
}
