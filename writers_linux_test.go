package file

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/keepwatch/file/internal/decide"
	"github.com/keepwatch/file/internal/events"
	"github.com/keepwatch/file/internal/osfile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// To a user who is not the file's owner (and has no CAP_LEASE), the kernel
// does not say: the watch falls back on what the file's times say.
func TestTheKernelSaysNothingOfWritersToOneNotTheOwner(t *testing.T) {
	const envPath = "KEEPWATCH_ROOTS_FILE"
	if inChild(t) {
		path := os.Getenv(envPath)
		info, err := os.Stat(path)
		require.NoError(t, err)
		assert.Equal(t, decide.WritersUnknown, osfile.WritersOf(path, info))
		return
	}
	path := filepath.Join(nobodysTempDir(t), "config.yaml")
	write(t, path, "v1\n")
	require.NoError(t, os.Chmod(path, 0o644))
	asNobody(t, envPath+"="+path)
}

// A writer no event told of (it opened the file before a link was
// retargeted at it) and that holds the file open, pausing far longer than
// the watch once gave such a writer: the kernel says it holds the file,
// and the watch waits for its close, where it once read the first half.
func TestAWriterNoEventToldOfIsAwaitedWhileTheKernelSaysItHoldsTheFile(t *testing.T) {
	path, other := linkedLayout(t)
	t2 := filepath.Join(other, "t2.yaml")
	info, err := os.Stat(filepath.Join(other, "t1.yaml"))
	require.NoError(t, err)
	if osfile.WritersOf(filepath.Join(other, "t1.yaml"), info) == decide.WritersUnknown {
		t.Skip("the kernel does not say who holds a file open for writing here")
	}
	_, r := watchedByEvents(t, path)
	whole := strings.Repeat("key: value\n", 100)
	w, err := os.OpenFile(t2, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	require.NoError(t, err)
	_, err = w.WriteString(whole[:len(whole)/2])
	require.NoError(t, err)
	retarget(t, path, t2)
	time.Sleep(300 * time.Millisecond) // and thinks, holding the file open
	_, err = w.WriteString(whole[len(whole)/2:])
	require.NoError(t, err)
	require.NoError(t, w.Close())
	r.waitContent(t, whole)
	assert.Equal(t, []string{whole}, r.contents(), "never half of it")
}

// addsRecorded is the process hub's notifier, noting what each watch is
// added to report.
type addsRecorded struct {
	events.Notifier
	mu   *sync.Mutex
	adds map[string]decide.WatchKind
}

func (n addsRecorded) Add(path string, report decide.WatchKind) (int, error) {
	n.mu.Lock()
	n.adds[path] |= report
	n.mu.Unlock()
	return n.Notifier.Add(path, report)
}

// recordingAdds is an option giving the watch such a notifier, and a
// function that returns what the watch of path was added to report so far.
func recordingAdds() (Option, func(path string) decide.WatchKind) {
	var mu sync.Mutex
	adds := make(map[string]decide.WatchKind)
	opt := withNotifier(func() (events.Notifier, error) {
		n, err := events.ProcessHub.Subscribe()
		if err != nil {
			return nil, err
		}
		return addsRecorded{n, &mu, adds}, nil
	})
	return opt, func(path string) decide.WatchKind {
		mu.Lock()
		defer mu.Unlock()
		return adds[path]
	}
}

// A file removed, then made again and written at once by another user:
// where the kernel does not say who writes, the creator's close may come
// before the new file's own watch, and only its directory can tell of it.
// So the directory is asked for its entries' closes, and each creation is
// read at its close, every one delivered.
func TestWhereTheKernelDoesNotSayWhoWritesACreatorsCloseIsHeardThroughTheDirectory(t *testing.T) {
	creationsByNobodysWatch(t, false)
}

// A watch started before its file is there (WithWaitForPath) cannot know
// whether the kernel will say who writes the file to come, so its
// directory is asked for its entries' closes from the start: the first
// creation is read at its creator's close too, not a held-open window
// later.
func TestAWatchWaitingForItsFileHearsItsCreatorsCloseThroughTheDirectory(t *testing.T) {
	creationsByNobodysWatch(t, true)
}

// creationsByNobodysWatch has a child, as nobody, watch a file of root's
// that root removes and writes again nine times, the first time after the
// watch started on no file if missing. Each creation is delivered once.
func creationsByNobodysWatch(t *testing.T, missing bool) {
	const envBase = "KEEPWATCH_BASE"
	if !inChild(t) {
		if os.Geteuid() != 0 {
			t.Skip("changing user needs root")
		}
		base := nobodysTempDir(t)
		path := filepath.Join(base, "config.yaml")
		if !missing {
			write(t, path, "v1\n")
		}
		c := startChild(t, &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}, envBase+"="+base)
		c.await(t, "watching")
		for i := 2; i <= 10; i++ {
			if i > 2 || !missing {
				require.NoError(t, os.Remove(path))
			}
			write(t, path, fmt.Sprintf("v%d\n", i))
			c.tell(t, "written")
			c.await(t, "seen")
		}
		c.wait(t)
		return
	}
	dir := os.Getenv(envBase)
	path := filepath.Join(dir, "config.yaml")
	opt, added := recordingAdds()
	_, r := watchedByEvents(t, path, opt, WithWaitForPath())
	require.Eventually(t, func() bool { return added(dir)&decide.WatchCloses != 0 }, waitFor, tick,
		"the directory is asked for its entries' closes: %v", added(dir))
	report(t, "watching")
	for i := 2; i <= 10; i++ {
		awaitParent(t, "written")
		r.waitContent(t, fmt.Sprintf("v%d\n", i))
		report(t, "seen")
	}
	assert.Len(t, r.contents(), 9, "each creation once: %s", r)
}

// Where the kernel says who writes, the probe stands in for a writer's
// close, and the file's directory is asked for nothing of its entries'
// content: writers of other files there wake nothing.
func TestWhereTheKernelSaysWhoWritesTheDirectoryReportsNoCloses(t *testing.T) {
	needCaps(t, decide.Caps{Files: true}, "a file by its own watch")
	dir := realTempDir(t)
	path := filepath.Join(dir, "config.yaml")
	write(t, path, "v1\n")
	info, err := os.Stat(path)
	require.NoError(t, err)
	if osfile.WritersOf(path, info) == decide.WritersUnknown {
		t.Skip("the kernel does not say who holds a file open for writing here")
	}
	opt, added := recordingAdds()
	_, r := watchedByEvents(t, path, opt)
	// Renamed over, never missing: a read that finds no file asks for
	// closes, for a writer the kernel may not name.
	replace(t, path, "v2\n")
	r.waitContent(t, "v2\n") // read after the first read's watches were added
	assert.Equal(t, decide.WatchSelf|decide.WatchNames, added(dir), "the directory: its names, and itself")
	want := decide.WatchSelf | decide.WatchContent
	if hubCaps(t).Opens {
		want |= decide.WatchOpens // who holds it open, counted: see decide's openers
	}
	assert.Equal(t, want, added(path), "the file: its content, its opens, and itself")
}

// The kernel has no inotify watch left for the file by itself (another
// process took them) when it is renamed over: its directory, watched for
// names until then, is asked for its entries' writes, so that an edit in
// place is still heard, with the re-check off.
func TestAnEditAfterTheFilesOwnWatchIsRefusedIsHeardThroughItsDirectory(t *testing.T) {
	needCaps(t, decide.Caps{Files: true}, "a file by its own watch")
	dir := realTempDir(t)
	path := filepath.Join(dir, "config.yaml")
	write(t, path, "v1\n")
	var refuse atomic.Bool
	var mu sync.Mutex
	adds := make(map[string]decide.WatchKind)
	_, r := watchedByEvents(t, path, withNotifier(func() (events.Notifier, error) {
		n, err := events.ProcessHub.Subscribe()
		if err != nil {
			return nil, err
		}
		return filesRefused{addsRecorded{n, &mu, adds}, path, &refuse}, nil
	}))
	refuse.Store(true)
	replace(t, path, "v2\n")
	r.waitContent(t, "v2\n")
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return adds[dir]&decide.WatchContent != 0
	}, waitFor, tick, "the directory is asked for its entries' writes")
	write(t, path, "v3, in place\n")
	r.waitContent(t, "v3, in place\n")
	assert.Equal(t, []string{"v2\n", "v3, in place\n"}, r.contents())
}

// filesRefused is a notifier with no watch left for the file by itself
// once refuse is set (ENOSPC).
type filesRefused struct {
	addsRecorded
	file   string
	refuse *atomic.Bool
}

func (n filesRefused) Add(path string, report decide.WatchKind) (int, error) {
	if path == n.file && n.refuse.Load() {
		return 0, syscall.ENOSPC
	}
	return n.addsRecorded.Add(path, report)
}

// Where the file's own watch tells who opens and closes it, rewriting the
// file in place asks the kernel nothing once the count of its openers has
// begun (at the first read with the watch in place): no read takes a
// lease, so no writer's open waits on one, even while this process is
// stopped. Each rewrite is still delivered, whole.
func TestInPlaceRewritesOfAFileWhoseOpensAreToldTakeNoLease(t *testing.T) {
	needCaps(t, decide.Caps{Opens: true}, "a file's opens")
	path := filepath.Join(realTempDir(t), "config.yaml")
	write(t, path, "v0\n")
	info, err := os.Stat(path)
	require.NoError(t, err)
	if osfile.WritersOf(path, info) == decide.WritersUnknown {
		t.Skip("the kernel does not say who holds a file open for writing here")
	}
	_, r := watchedByEvents(t, path)
	write(t, path, "v1\n")
	r.waitContent(t, "v1\n")
	asked := osfile.KernelAsked()
	for i := 2; i <= 30; i++ {
		want := fmt.Sprintf("v%d\n", i)
		write(t, path, want)
		r.waitContent(t, want)
	}
	assert.Equal(t, asked, osfile.KernelAsked(), "reads that asked the kernel, with a lease, after the count began")
	assert.Len(t, r.contents(), 30, "every rewrite delivered once: %s", r)
}
