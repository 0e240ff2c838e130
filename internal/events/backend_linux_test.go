package events

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/keepwatch/file/internal/decide"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// kernelWatches counts the watches the kernel holds for h's inotify
// instance, from /proc/self/fdinfo; 0 when h has no backend.
func kernelWatches(t *testing.T, h *Hub) int {
	t.Helper()
	h.mu.Lock()
	fd := -1
	if h.cur != nil {
		rc, err := h.cur.b.(*inotifyBackend).in.SyscallConn()
		require.NoError(t, err)
		require.NoError(t, rc.Control(func(f uintptr) { fd = int(f) }))
	}
	h.mu.Unlock()
	if fd < 0 {
		return 0
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/self/fdinfo/%d", fd))
	require.NoError(t, err)
	return strings.Count(string(b), "inotify wd:")
}

// privateHub is a hub of the test's own on the kernel's inotify, so that
// its watches can be counted.
func privateHub(t *testing.T) *Hub {
	h := NewHub(NewInotifyBackend)
	t.Cleanup(func() {
		assert.Zero(t, kernelWatches(t, h), "no kernel watch outlives the last watch")
	})
	return h
}

func inotifyEvent(wd int32, mask uint32, name string) []byte {
	size := 0
	if name != "" {
		size = (len(name)/16 + 1) * 16 // NUL-padded, as the kernel does
	}
	b := make([]byte, unix.SizeofInotifyEvent+size)
	binary.NativeEndian.PutUint32(b[0:], uint32(wd))
	binary.NativeEndian.PutUint32(b[4:], mask)
	binary.NativeEndian.PutUint32(b[12:], uint32(size))
	copy(b[unix.SizeofInotifyEvent:], name)
	return b
}

// nopHandler drops what a backend reads.
type nopHandler struct{}

func (nopHandler) Events([]RawEvent) bool { return false }
func (nopHandler) Failed(error)           {}

func TestParseInotify(t *testing.T) {
	var buf []byte
	buf = append(buf, inotifyEvent(1, unix.IN_CLOSE_WRITE, "config.yaml")...)
	buf = append(buf, inotifyEvent(2, unix.IN_MOVED_TO|unix.IN_ISDIR, "..data")...)
	buf = append(buf, inotifyEvent(3, unix.IN_DELETE_SELF, "")...)
	buf = append(buf, inotifyEvent(3, unix.IN_IGNORED, "")...)
	buf = append(buf, inotifyEvent(4, unix.IN_UNMOUNT, "")...)
	buf = append(buf, inotifyEvent(-1, unix.IN_Q_OVERFLOW, "")...)
	buf = append(buf, inotifyEvent(5, unix.IN_MODIFY|unix.IN_ATTRIB, "x")...)
	assert.Equal(t, []RawEvent{
		{ID: 1, Name: "config.yaml", Op: decide.OpClose},
		{ID: 2, Name: "..data", Op: decide.OpCreate},
		{ID: 3, Op: decide.OpRemove},
		{ID: 3, Op: decide.OpDropped},
		{ID: EveryWatch, Op: decide.OpRescan},
		{ID: 5, Name: "x", Op: decide.OpWrite | decide.OpAttrib},
	}, parseInotify(nil, buf), "IN_UNMOUNT is left to the IN_IGNORED that follows it")
}

// The kernel keeps one watch per inode: the backend gives every path to
// one directory the same id, and the hub serves each path its events.
func TestOneDirectoryByTwoPathsIsOneWatch(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(root, "a"), 0o755))
	b, err := NewInotifyBackend(nopHandler{})
	require.NoError(t, err)
	defer b.Close()
	id1, err := b.Add(filepath.Join(root, "a"), reportAll)
	require.NoError(t, err)
	require.NoError(t, os.Rename(filepath.Join(root, "a"), filepath.Join(root, "b")))
	id2, err := b.Add(filepath.Join(root, "b"), reportAll)
	require.NoError(t, err)
	assert.Equal(t, id1, id2, "one inode, one watch")
}

// The hub's routing, with a scripted backend where two paths lead to one
// inode: each path's watchers get the events under their own name, and the
// watch is released only when neither path needs it.
func TestHubServesOneWatchUnderEachOfItsPaths(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		raw := &fakeBackends{}
		h := NewHub(raw.newBackend)
		a, _ := h.Subscribe()
		bsub, _ := h.Subscribe()
		defer bsub.Close()
		w := raw.last()
		w.sameInode("/srv/a", "/srv/b")
		require.NoError(t, added(a.Add("/srv/a", reportAll)))
		a.Want("/srv/a/config.yaml")
		require.NoError(t, added(bsub.Add("/srv/b", reportAll)))
		bsub.Want("/srv/b/config.yaml")
		assert.Equal(t, []string{"/srv/a", "/srv/b"}, w.watched(), "one inode, watched once")

		queued := func(n Notifier) []decide.Event {
			var out []decide.Event
			for {
				select {
				case ev := <-n.(*subscription).events:
					out = append(out, ev)
				default:
					return out
				}
			}
		}
		w.send("/srv/a/config.yaml", decide.OpClose) // the kernel names it by its watch: either path
		synctest.Wait()
		assert.Equal(t, []decide.Event{{Name: "/srv/a/config.yaml", Op: decide.OpClose}}, queued(a))
		assert.Equal(t, []decide.Event{{Name: "/srv/b/config.yaml", Op: decide.OpClose}}, queued(bsub))

		require.NoError(t, a.Close())
		assert.Equal(t, []string{"/srv/a", "/srv/b"}, w.watched(), "b still needs the inode's watch")
		w.send("/srv/b/config.yaml", decide.OpWrite)
		synctest.Wait()
		assert.Equal(t, []decide.Event{{Name: "/srv/b/config.yaml", Op: decide.OpWrite}}, queued(bsub))
	})
}

// A watch the kernel drops (its directory deleted, its filesystem
// unmounted) is forgotten, and each path that used it told that it went.
func TestHubForgetsAWatchTheKernelDropped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		raw := &fakeBackends{}
		h := NewHub(raw.newBackend)
		s, _ := h.Subscribe()
		defer s.Close()
		id, err := s.Add("/vol/..2026", reportAll)
		require.NoError(t, err)
		w := raw.last()
		w.send("/vol/..2026", decide.OpDropped)
		synctest.Wait()
		assert.Equal(t, decide.Event{Name: "/vol/..2026", Op: decide.OpRemove | decide.OpGone, Watch: id}, <-s.(*subscription).events,
			"the path went, and the inode with it, told on its watch")
		h.mu.Lock()
		assert.Empty(t, h.watches)
		assert.Empty(t, s.(*subscription).paths)
		h.mu.Unlock()
	})
}

func TestChangedMountsNamesTheMountPointsThatCameOrWent(t *testing.T) {
	base := "22 1 8:1 / / rw - ext4 /dev/sda1 rw\n30 22 0:5 / /proc rw - proc proc rw\n"
	mounted := base + "40 22 0:40 / /etc/app rw - tmpfs tmpfs rw\n"
	assert.Empty(t, changedMounts([]byte(base), []byte(base)))
	assert.Equal(t, []string{"/etc/app"}, changedMounts([]byte(base), []byte(mounted)))
	assert.Equal(t, []string{"/etc/app"}, changedMounts([]byte(mounted), []byte(base)))
	remounted := strings.Replace(mounted, "tmpfs rw\n", "tmpfs ro\n", 1)
	assert.Equal(t, []string{"/etc/app"}, changedMounts([]byte(mounted), []byte(remounted)))
}

// A mount table change makes only the subscriptions whose paths go
// through the mount point look again; lost events make every one.
func TestAMountChangeRescansOnlyWhatItMoves(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		raw := &fakeBackends{}
		h := NewHub(raw.newBackend)
		under, _ := h.Subscribe()
		elsewhere, _ := h.Subscribe()
		defer under.Close()
		defer elsewhere.Close()
		require.NoError(t, added(under.Add("/etc/app", reportAll)))
		under.Want("/etc/app/config.yaml")
		require.NoError(t, added(elsewhere.Add("/srv", reportAll)))
		elsewhere.Want("/srv/config.yaml")
		queued := func(n Notifier) int { return len(n.(*subscription).events) }

		raw.last().h.Events([]RawEvent{{ID: EveryWatch, Name: "/etc/app", Op: decide.OpRescan}})
		assert.Equal(t, 1, queued(under))
		assert.Equal(t, 0, queued(elsewhere), "its paths do not go through /etc/app")
		<-under.Events()
		for _, at := range []string{"/", ""} { // a mount at the root, events lost
			raw.last().h.Events([]RawEvent{{ID: EveryWatch, Name: at, Op: decide.OpRescan}})
			assert.Equal(t, 1, queued(under))
			assert.Equal(t, 1, queued(elsewhere))
			<-under.Events()
			<-elsewhere.Events()
		}
	})
}

// BenchmarkInotifyBatch hands on a rename-over's batch, from the kernel's
// bytes to the session's channel: four events on an editor's temporary
// file, wanted by no one, then the one that matters. It runs on the
// reader's goroutine before the session wakes, so its allocations are on
// every update's way to the callback.
func BenchmarkInotifyBatch(b *testing.B) {
	raw := &fakeBackends{}
	h := NewHub(raw.newBackend)
	n, err := h.Subscribe()
	require.NoError(b, err)
	defer n.Close()
	dir := filepath.Join(b.TempDir(), "etc", "app")
	require.NoError(b, added(n.Add(dir, reportAll)))
	n.Want(filepath.Join(dir, "config.yaml"))
	id, _ := raw.last().Add(dir, reportAll)

	var buf []byte
	for _, e := range []struct {
		mask uint32
		name string
	}{
		{unix.IN_CREATE, ".config.yaml.swp"},
		{unix.IN_MODIFY, ".config.yaml.swp"},
		{unix.IN_CLOSE_WRITE, ".config.yaml.swp"},
		{unix.IN_MOVED_FROM, ".config.yaml.swp"},
		{unix.IN_MOVED_TO, "config.yaml"},
	} {
		buf = append(buf, inotifyEvent(int32(id), e.mask, e.name)...)
	}
	var batch []RawEvent
	b.ReportAllocs()
	for b.Loop() {
		batch = parseInotify(batch[:0], buf)
		h.cur.Events(batch)
		<-n.Events()
	}
}

// A burst of writes to a file that a session watches by itself and through
// its directory, as every session on Linux does: the kernel tells each
// write twice, on the directory's watch and then on the file's own, so the
// copies alternate and neither is ever the one queued last. The burst is
// merged still, a pair at a time, so that it fills no session's queue and
// the writer's close after it is not lost with a rescan: the close on the
// file's own watch (a wait's) and on its directory's.
func TestABurstOfWritesToAFileWatchedTwiceIsMergedWhileQueued(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.yaml")
	require.NoError(t, os.WriteFile(path, []byte("v: 0\n"), 0o644))
	h := privateHub(t)
	n, err := h.Subscribe()
	require.NoError(t, err)
	defer n.Close()
	require.NoError(t, added(n.Add(dir, reportAll)))
	own, err := n.Add(path, reportAll)
	require.NoError(t, err)
	n.Want(path)

	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	for i := range 100 { // echo of 100 lines into >>: a write each
		_, err := fmt.Fprintf(f, "key%d: v\n", i)
		require.NoError(t, err)
	}
	require.NoError(t, f.Close())
	n.Sync()

	var got []decide.Event
	for len(n.Events()) > 0 {
		got = append(got, <-n.Events())
	}
	assert.NotContains(t, got, decide.Event{Op: decide.OpRescan}, "the burst overflowed the queue")
	assert.Contains(t, got, decide.Event{Name: path, Op: decide.OpClose, Watch: own}, "the close on the file's own watch")
	assert.Contains(t, got, decide.Event{Name: path, Op: decide.OpClose}, "the close on its directory's")
	assert.LessOrEqual(t, len(got), 4, "a write and a close, each told twice: %v", got)
}

// The backend names the inode a watch is of from the kernel's account of
// its watches, whatever the path it was added by shows by then: the file
// renamed away, another in its place; and says the watch is gone once the
// file is deleted.
func TestTheKernelNamesTheInodeAWatchIsOf(t *testing.T) {
	dir := t.TempDir()
	path, away := filepath.Join(dir, "config.yaml"), filepath.Join(dir, "away.yaml")
	require.NoError(t, os.WriteFile(path, []byte("v1\n"), 0o644))
	first, err := os.Stat(path)
	require.NoError(t, err)
	b, err := NewInotifyBackend(nopHandler{})
	require.NoError(t, err)
	defer b.Close()
	id, err := b.Add(path, reportAll)
	require.NoError(t, err)

	require.NoError(t, os.Rename(path, away))
	require.NoError(t, os.WriteFile(path, []byte("v2\n"), 0o644))
	got, ok := b.Inode(id)
	require.True(t, ok)
	st := first.Sys().(*syscall.Stat_t)
	assert.Equal(t, decide.WatchedInode{Dev: uint64(st.Dev), Ino: st.Ino}, got, "the file renamed away, not the one at its path now")

	require.NoError(t, os.Remove(away))
	got, ok = b.Inode(id)
	require.True(t, ok)
	assert.True(t, got.Gone, "deleted: the kernel dropped the watch")
}

func TestWatchInodeReadsFdinfo(t *testing.T) {
	info := []byte("pos:\t0\nflags:\t02004000\nmnt_id:\t15\nino:\t1057\n" +
		"inotify wd:1a ino:9847ba sdev:fe00000 mask:fce ignored_mask:0 fhandle-bytes:8 fhandle-type:1 f_handle:ba4798003be4a862\n" +
		"inotify wd:2 ino:2 sdev:800001 mask:fce ignored_mask:0 fhandle-bytes:8 fhandle-type:1 f_handle:00\n")
	got, ok := watchInode(info, 0x1a)
	assert.True(t, ok)
	assert.Equal(t, decide.WatchedInode{Dev: 0xfe00, Ino: 0x9847ba}, got)
	got, ok = watchInode(info, 2)
	assert.True(t, ok)
	assert.Equal(t, decide.WatchedInode{Dev: 0x801, Ino: 2}, got, "sda1: major 8, minor 1")
	got, ok = watchInode(info, 1)
	assert.True(t, ok)
	assert.True(t, got.Gone, "wd 1 is not 1a")
}

// mountEvents records the rescans a backend hands on for mount changes.
type mountEvents struct{ points chan string }

func (m mountEvents) Events(batch []RawEvent) bool {
	for _, e := range batch {
		if e.ID == EveryWatch && e.Op == decide.OpRescan {
			m.points <- e.Name
		}
	}
	return false
}
func (mountEvents) Failed(error) {}

// A wait on the mount table that fails (ENOMEM) is made again, and the
// next mount is reported: the goroutine that waits gave up for good
// before, and mounts were then seen by the re-check alone.
func TestTheMountTablesWaitIsMadeAgainAfterItFails(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting needs root")
	}
	failed := make(chan struct{})
	pollMounts = func(fds []unix.PollFd, timeout int) (int, error) {
		select {
		case <-failed:
			return unix.Poll(fds, timeout)
		default:
			close(failed)
			return 0, unix.ENOMEM
		}
	}
	t.Cleanup(func() { pollMounts = unix.Poll })
	m := mountEvents{points: make(chan string, 16)}
	b, err := NewInotifyBackend(m)
	require.NoError(t, err)
	t.Cleanup(func() { b.Close() })
	<-failed

	src, point := t.TempDir(), t.TempDir()
	require.NoError(t, unix.Mount(src, point, "", unix.MS_BIND, ""))
	t.Cleanup(func() { _ = unix.Unmount(point, unix.MNT_DETACH) })
	deadline := time.After(10 * time.Second)
	for {
		select {
		case got := <-m.points:
			if got == point {
				return
			}
		case <-deadline:
			t.Fatalf("no rescan of %s within 10 s of its mount", point)
		}
	}
}
