package file

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/keepwatch/file/internal/decide"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// Changes that reach the callback through the real kernel, by the event
// that reports them. Every test turns the re-check off, so that only an
// event can deliver, and the quiet window up where it must not matter.

// An os.WriteFile (open, truncate, write, close) is read when the writer
// closes the file: with a quiet window of an hour, only the close can have
// made it be read.
func TestAnInPlaceWriteIsReadWhenTheWriterCloses(t *testing.T) {
	needCaps(t, decide.Caps{Closes: true}, "a writer close")
	path := filepath.Join(t.TempDir(), "config.yaml")
	write(t, path, "v1\n")
	_, r := watchedByEvents(t, path, WithQuietWindow(time.Hour))
	for i := 2; i <= 5; i++ {
		want := strings.Repeat("v", i) + "\n"
		write(t, path, want)
		end := time.Now()
		r.waitContent(t, want)
		r.logDelay(t, "in-place write, from its end", end)
	}
	assert.Len(t, r.contents(), 4)
}

// A slow writer behind a shell redirect (`slow-producer > config.yaml`):
// the file is truncated, or removed and created again, now, and written
// later. The callback never sees the empty file, however long the writer
// takes to start: an empty file is not accepted while its writer has it
// open, and a removal reads nothing. A writer that pauses mid-write longer
// than the window, holding the file open, is read as it stands then (as
// code written for the stock provider expects to see a write made by a
// writer that keeps the file open), and whole at its close.
func TestASlowWriterIsNeverReadEmpty(t *testing.T) {
	needCaps(t, decide.Caps{Closes: true}, "a writer close")
	const pause = 60 * time.Millisecond
	cases := []struct {
		name          string
		fresh         bool // removed first, then created by the writer
		before, midst time.Duration
	}{
		{"truncated, then written with pauses", false, pause, pause},
		{"removed, created, written with a pause", true, 0, pause},
		// The shell creates the file before the producer starts, which may
		// take longer than the window to write at all.
		{"removed, created, written after a pause", true, pause, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config.yaml")
			write(t, path, "v1\n")
			const window = 50 * time.Millisecond
			_, r := watchedByEvents(t, path, WithQuietWindow(window))

			full := strings.Repeat("key: value\n", 200)
			flags := os.O_WRONLY | os.O_TRUNC
			var removed time.Time
			if c.fresh {
				require.NoError(t, os.Remove(path))
				removed = time.Now()
				flags = os.O_WRONLY | os.O_CREATE | os.O_EXCL
			}
			fd, err := os.OpenFile(path, flags, 0o644)
			require.NoError(t, err)
			// Held up between the two (a loaded machine), the file was
			// missing for a window: reporting that is right.
			missing := c.fresh && time.Since(removed) >= window
			time.Sleep(c.before) // the producer starts up
			_, err = fd.WriteString(full[:len(full)/2])
			require.NoError(t, err)
			time.Sleep(c.midst) // and thinks
			_, err = fd.WriteString(full[len(full)/2:])
			require.NoError(t, err)
			require.NoError(t, fd.Close())
			closed := time.Now()

			r.waitContent(t, full)
			r.logDelay(t, c.name+", from its close", closed)
			got := r.contents()
			assert.NotContains(t, got, "", "the empty file was delivered")
			if c.midst == 0 {
				assert.Equal(t, []string{full}, got)
			} else {
				assert.Subset(t, []string{full[:len(full)/2], full}, got, "only what the writer had written when it paused")
			}
			if missing {
				t.Logf("the file was missing for a window (the test was held up): a report of it is right")
				return
			}
			assert.Empty(t, r.errs(), "the file was replaced, not lost")
		})
	}
}

// Every way a complete file takes the path's place is read on its own
// event: with a quiet window of an hour, none of them can have waited for
// it. (A file linked in from O_TMPFILE is the exception: created, never
// closed under that name, it is read a window later.)
func TestAFileTakingThePathsPlaceIsReadOnItsEvent(t *testing.T) {
	needCaps(t, decide.Caps{Closes: true}, "a writer close")
	cases := []struct {
		name string
		do   func(t *testing.T, path string)
	}{
		{"rename over it", func(t *testing.T, path string) { replace(t, path, "new\n") }},
		{"removed, then a hard link made", func(t *testing.T, path string) {
			write(t, path+".staged", "new\n")
			require.NoError(t, os.Remove(path))
			require.NoError(t, os.Link(path+".staged", path))
		}},
		{"removed, then extracted as tar does (create, write, close, set times)", func(t *testing.T, path string) {
			require.NoError(t, os.Remove(path))
			write(t, path, "new\n")
			require.NoError(t, os.Chtimes(path, time.Unix(1e9, 0), time.Unix(1e9, 0)))
		}},
		{"moved away, another moved in", func(t *testing.T, path string) {
			write(t, path+".new", "new\n")
			require.NoError(t, os.Rename(path, path+".old"))
			require.NoError(t, os.Rename(path+".new", path))
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config.yaml")
			write(t, path, "v1\n")
			_, r := watchedByEvents(t, path, WithQuietWindow(time.Hour))
			start := time.Now()
			c.do(t, path)
			r.waitContent(t, "new\n")
			r.logDelay(t, c.name, start)
			assert.Equal(t, []string{"new\n"}, r.contents())
			assert.Empty(t, r.errs())
		})
	}
}

// A plain ancestor renamed away and another renamed in its place, and two
// ancestors exchanged with renameat2(RENAME_EXCHANGE): the path leads
// elsewhere though nothing on its symlink chain changed. Its kernel
// watches do not pile up however often that happens.
func TestAnAncestorRenamedOrExchangedIsFollowed(t *testing.T) {
	root := t.TempDir()
	app := filepath.Join(root, "srv", "app")
	path := filepath.Join(app, "conf", "config.yaml")
	makeApp := func(dir, content string) {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, "conf"), 0o755))
		write(t, filepath.Join(dir, "conf", "config.yaml"), content)
	}
	makeApp(app, "v0\n")
	h := privateHub(t)
	_, r := watchedByEvents(t, path, withNotifier(h.Subscribe))

	var watches []int
	for i := 1; i <= 5; i++ {
		// mv app app.old && mv app.new app
		want := strings.Repeat("v", i) + "\n"
		makeApp(app+".new", want)
		require.NoError(t, os.Rename(app, app+".old"))
		start := time.Now()
		require.NoError(t, os.Rename(app+".new", app))
		r.waitContent(t, want)
		r.logDelay(t, "ancestor renamed", start)
		require.NoError(t, os.RemoveAll(app+".old"))

		// renameat2(RENAME_EXCHANGE) with a sibling
		want = strings.Repeat("x", i) + "\n"
		makeApp(app+".next", want)
		start = time.Now()
		require.NoError(t, unix.Renameat2(unix.AT_FDCWD, app+".next", unix.AT_FDCWD, app, unix.RENAME_EXCHANGE))
		r.waitContent(t, want)
		r.logDelay(t, "ancestors exchanged", start)
		require.NoError(t, os.RemoveAll(app+".next"))
		sentinel(t, r, path) // the session has settled on the new chain
		watches = append(watches, awaitSteady(t, func() int { return kernelWatches(t, h) }))
	}
	for i, n := range watches {
		assert.Equal(t, watches[0], n, "kernel watches after round %d: %v", i+1, watches)
	}
	assert.Empty(t, r.errs())
}

// A write through the file's other name, a hard link in a directory
// nobody watches, is reported only on the file's own inode.
func TestAWriteThroughAHardLinkIsSeen(t *testing.T) {
	needCaps(t, decide.Caps{Files: true}, "a write to the file's inode under another name")
	root := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(root, "conf"), 0o755))
	require.NoError(t, os.Mkdir(filepath.Join(root, "elsewhere"), 0o755))
	path := filepath.Join(root, "conf", "config.yaml")
	other := filepath.Join(root, "elsewhere", "link.yaml")
	write(t, path, "v1\n")
	require.NoError(t, os.Link(path, other))
	_, r := watchedByEvents(t, path)

	start := time.Now()
	write(t, other, "v2\n")
	r.waitContent(t, "v2\n")
	r.logDelay(t, "write through a hard link", start)
}

// A file bind-mounted on another, which is what a Kubernetes subPath mount
// is, and how some sidecars and CSI drivers hand files over: a write to the
// source reaches the watch of the mount point.
func TestAWriteToTheSourceOfABindMountedFileIsSeen(t *testing.T) {
	if !inMountNamespace(t) {
		return
	}
	root := t.TempDir()
	src := filepath.Join(root, "volume", "config.yaml")
	dst := filepath.Join(root, "etc", "config.yaml")
	require.NoError(t, os.MkdirAll(filepath.Dir(src), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Dir(dst), 0o755))
	write(t, src, "v1\n")
	write(t, dst, "")
	bindMount(t, src, dst)
	_, r := watchedByEvents(t, dst)
	errs := waitErrs(t, r, 1)
	assert.ErrorIs(t, errs[0], ErrSubPathMount, "it is recognized for what it is")

	start := time.Now()
	write(t, src, "v2\n") // in place: a bind mount follows the inode
	r.waitContent(t, "v2\n")
	r.logDelay(t, "write to the source of a bind-mounted file", start)
}

// One directory reached by two paths in one process, here through a bind
// mount: each provider gets the change, and one provider's Unwatch does not
// take the other's kernel watch away.
func TestOneDirectoryByTwoPathsServesBoth(t *testing.T) {
	if !inMountNamespace(t) {
		return
	}
	root := t.TempDir()
	a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
	require.NoError(t, os.Mkdir(a, 0o755))
	require.NoError(t, os.Mkdir(b, 0o755))
	write(t, filepath.Join(a, "config.yaml"), "v1\n")
	bindMount(t, a, b)

	fa, ra := watchedByEvents(t, filepath.Join(a, "config.yaml"))
	_, rb := watchedByEvents(t, filepath.Join(b, "config.yaml"))
	start := time.Now()
	replace(t, filepath.Join(a, "config.yaml"), "v2\n")
	ra.waitContent(t, "v2\n")
	rb.waitContent(t, "v2\n")
	rb.logDelay(t, "one directory by two paths, the second path", start)

	require.NoError(t, fa.Unwatch())
	start = time.Now()
	replace(t, filepath.Join(b, "config.yaml"), "v3\n")
	rb.waitContent(t, "v3\n")
	rb.logDelay(t, "the second path after the first unwatched", start)
	write(t, filepath.Join(a, "config.yaml"), "v4\n")
	rb.waitContent(t, "v4\n")
}

// The same without root: a directory renamed while another provider
// watches its new name. The kernel keeps one watch for the inode; both
// providers are served by it, under their own paths.
func TestADirectoryRenamedOntoAWatchedNameServesItsNewWatcher(t *testing.T) {
	// Only the inotify backend, which watches files too, keys its watches
	// by the kernel's descriptor; fsnotify keys them by path, and serves one
	// directory under one of its names.
	needCaps(t, decide.Caps{Files: true}, "one directory watched under two names")
	root := t.TempDir()
	a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
	require.NoError(t, os.Mkdir(a, 0o755))
	write(t, filepath.Join(a, "config.yaml"), "v1\n")
	fa, ra := watchedByEvents(t, filepath.Join(a, "config.yaml"), WithQuietWindow(time.Hour))
	_, rb := watchedByEvents(t, filepath.Join(b, "config.yaml"), WithWaitForPath())
	rb.waitErr(t, os.ErrNotExist)

	start := time.Now()
	require.NoError(t, os.Rename(a, b))
	rb.waitContent(t, "v1\n")
	rb.logDelay(t, "directory renamed onto a watched name", start)
	require.NoError(t, fa.Unwatch())
	write(t, filepath.Join(b, "config.yaml"), "v2\n")
	rb.waitContent(t, "v2\n")
	assert.Empty(t, ra.contents())
}

// A directory the process may traverse but not list (mode 0731 here, like
// Debian's /etc/ssl/private at 0710) cannot be watched: the provider
// watches the file itself instead, and stays on events rather than polling.
func TestAFileInADirectoryThatCannotBeListedIsWatchedByItself(t *testing.T) {
	path, child := inUnlistableDirAsNobody(t)
	if !child {
		return
	}
	dir := filepath.Dir(path)
	_, err := os.ReadDir(dir)
	require.ErrorIs(t, err, os.ErrPermission, "the directory cannot be listed")
	f, r := watchedByEvents(t, path)
	assert.Equal(t, ModeEvents, f.Stats().Mode, "events, not polling")

	start := time.Now()
	write(t, path, "v2\n") // in place
	r.waitContent(t, "v2\n")
	r.logDelay(t, "in-place write in an unlistable directory", start)
	tmp := filepath.Join(dir, "key.pem.new")
	write(t, tmp, "v3\n")
	start = time.Now()
	require.NoError(t, os.Rename(tmp, path)) // rename-over
	r.waitContent(t, "v3\n")
	r.logDelay(t, "rename-over in an unlistable directory", start)
	write(t, path, "v4\n") // the new file is watched too
	r.waitContent(t, "v4\n")
	assert.Empty(t, r.errs())
	assert.Equal(t, ModeEvents, f.Stats().Mode)
}

// Something mounted over a watched directory, then unmounted: no inotify
// event tells of the mount, but the mount table does, and the unmount
// drops the watches inside it. The callback follows both ways.
func TestAMountOverTheDirectoryAndItsUnmountAreFollowed(t *testing.T) {
	if !inMountNamespace(t) {
		return
	}
	dir := filepath.Join(t.TempDir(), "conf")
	require.NoError(t, os.Mkdir(dir, 0o755))
	path := filepath.Join(dir, "config.yaml")
	write(t, path, "underneath\n")
	_, r := watchedByEvents(t, path)

	start := time.Now()
	require.NoError(t, unix.Mount("tmpfs", dir, "tmpfs", 0, "size=1m"))
	r.waitErr(t, os.ErrNotExist) // the mount hides the file
	r.logDelay(t, "mount over the directory (reported after the quiet window)", start)
	write(t, path, "mounted\n")
	r.waitContent(t, "mounted\n")
	start = time.Now()
	require.NoError(t, unix.Unmount(dir, unix.MNT_DETACH)) // detached: a read may hold the mount busy a moment
	r.waitContent(t, "underneath\n")
	r.logDelay(t, "unmount", start)
}

// ".." after a symlink to a directory goes up from where the link leads,
// as open(2) does, not from where the link sits.
func TestDotDotAfterASymlinkGoesUpFromItsTarget(t *testing.T) {
	root := t.TempDir()
	conf := filepath.Join(root, "conf")
	require.NoError(t, os.MkdirAll(filepath.Join(conf, "deploy", "v1", "bin"), 0o755))
	require.NoError(t, os.Symlink("deploy/v1/bin", filepath.Join(conf, "bin")))
	write(t, filepath.Join(conf, "deploy", "v1", "config.yaml"), "right\n")
	write(t, filepath.Join(conf, "config.yaml"), "wrong\n")

	for name, path := range map[string]string{
		"absolute": filepath.Join(conf, "bin") + "/../config.yaml",
		"relative": "bin/../config.yaml",
	} {
		t.Run(name, func(t *testing.T) {
			t.Chdir(conf)
			want, err := os.ReadFile(path)
			require.NoError(t, err)
			require.Equal(t, "right\n", string(want), "what the kernel opens")

			f, r := watchedByEvents(t, path)
			b, err := f.ReadBytes()
			require.NoError(t, err)
			assert.Equal(t, "right\n", string(b))
			write(t, filepath.Join(conf, "config.yaml"), "still wrong\n")
			start := time.Now()
			write(t, filepath.Join(conf, "deploy", "v1", "config.yaml"), "right again\n")
			r.waitContent(t, "right again\n")
			r.logDelay(t, ".. after a symlinked directory", start)
			assert.Equal(t, []string{"right again\n"}, r.contents())
			write(t, filepath.Join(conf, "deploy", "v1", "config.yaml"), "right\n")
			r.waitContent(t, "right\n")
		})
	}
}

// After an ancestor is renamed away or exchanged and the
// old tree kept (as deploy tools keep the last release), the watches below
// it must follow the new tree: a write there afterwards is delivered.
func TestAfterAnAncestorSwapWritesInTheNewTreeAreSeen(t *testing.T) {
	needCaps(t, decide.Caps{Ancestors: true}, "changes to ancestors")
	for _, swap := range []string{"rename", "exchange"} {
		t.Run(swap, func(t *testing.T) {
			root := t.TempDir()
			app := filepath.Join(root, "srv", "app")
			path := filepath.Join(app, "conf", "config.yaml")
			for dir, content := range map[string]string{app: "v0\n", app + ".next": "v1\n"} {
				require.NoError(t, os.MkdirAll(filepath.Join(dir, "conf"), 0o755))
				write(t, filepath.Join(dir, "conf", "config.yaml"), content)
			}
			_, r := watchedByEvents(t, path, WithQuietWindow(time.Hour))
			if swap == "rename" {
				require.NoError(t, os.Rename(app, app+".old"))
				require.NoError(t, os.Rename(app+".next", app))
			} else {
				require.NoError(t, unix.Renameat2(unix.AT_FDCWD, app+".next", unix.AT_FDCWD, app, unix.RENAME_EXCHANGE))
			}
			r.waitContent(t, "v1\n")
			write(t, path, "v2\n") // in place, in the new tree; the old one stays
			r.waitContent(t, "v2\n")
			write(t, filepath.Join(root, "srv", "app."+map[string]string{"rename": "old", "exchange": "next"}[swap], "conf", "config.yaml"), "old tree\n")
			sentinel(t, r, path)
			assert.NotContains(t, r.contents(), "old tree\n")
		})
	}
}

// A volume directory removed and made again (by a tool that provisions
// it) before the removal is reported: the watches added again find the
// file missing, which leaves no writer to wait for, so the volume's making
// is read on its own events. With a quiet window of an hour, a wait for
// quiet would not end within the test.
func TestAVolumeMadeAgainIsReadOnTheEventsOfItsMaking(t *testing.T) {
	needCaps(t, decide.Caps{Closes: true}, "a writer close")
	dir := filepath.Join(t.TempDir(), "config")
	path := newVolume(t, dir, config(0)).path("config.yaml")
	_, r := watchedByEvents(t, path, WithQuietWindow(time.Hour))
	for i := 1; i <= 3; i++ {
		require.NoError(t, os.RemoveAll(dir))
		start := time.Now()
		newVolume(t, dir, config(i))
		r.waitContent(t, config(i)["config.yaml"])
		r.logDelay(t, "volume made again", start)
	}
	assert.Len(t, r.contents(), 3, "each volume once: %s", r)
}

// inUnlistableDirAsNobody runs the test again as nobody, in a child, on
// dir/key.pem ("v1\n", writable by all) in a directory nobody may enter and
// write but not list (mode 0731, group nogroup; like Debian's
// /etc/ssl/private at 0710). It returns the file's path in the child, and
// false in the parent, which has nothing more to do.
func inUnlistableDirAsNobody(t *testing.T) (path string, child bool) {
	t.Helper()
	const envDir = "KEEPWATCH_PRIVATE_DIR"
	if inChild(t) {
		return filepath.Join(os.Getenv(envDir), "key.pem"), true
	}
	base := nobodysTempDir(t)
	dir := filepath.Join(base, "private")
	require.NoError(t, os.Mkdir(dir, 0o731))
	require.NoError(t, os.Chmod(dir, 0o731))
	require.NoError(t, os.Chown(dir, 0, 65534)) // group nogroup: may enter and write, not list
	path = filepath.Join(dir, "key.pem")
	write(t, path, "v1\n")
	require.NoError(t, os.Chmod(path, 0o666))
	asNobody(t, envDir+"="+dir)
	return "", false
}

// On Linux a watch's loop waits on its notifier's bell (events.Bell), not
// on its channels: a Recheck rings it, and so does the end of
// WatchWithContext's context, which ends the watch's goroutine at once,
// with no timer due to wake it.
func TestALoopOnABellWakesForARecheckAndForItsContextsEnd(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	write(t, path, "v1\n")
	f := Provider(path, WithLogger(testLogger(t)), WithRecheckInterval(0))
	_, _ = f.ReadBytes()
	ctx, cancel := ctxWithCancel(t)
	r := newRecorder(f)
	require.NoError(t, f.WatchWithContext(ctx, r.cb))
	f.mu.Lock()
	w := f.w
	f.mu.Unlock()
	require.Eventually(t, func() bool { return w.bell.Load() != nil }, waitFor, tick, "the loop waits on no bell")

	checks := f.Stats().LastCheck
	f.Recheck()
	require.Eventually(t, func() bool { return f.Stats().LastCheck.After(checks) }, waitFor, tick, "Recheck did not wake the loop")

	cancel()
	select {
	case <-w.done:
	case <-time.After(waitFor):
		t.Fatal("the context's end did not end the watch")
	}
	assert.Nil(t, w.bell.Load(), "the loop still waits on a bell")
}
