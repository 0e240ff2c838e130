package file

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/keepwatch/file/internal/decide"
	"github.com/keepwatch/file/kubevol"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A directory on the path that the process may not enter, made enterable
// again: recreated 0700 by root, then chmod 755, with the service running
// as nobody. The watched parent reports the chmod at once, so the file is
// delivered on that event (the re-check is off), and the watch never falls
// back to polling while an ancestor can be watched.
//
// The root parent changes the tree; a child running as nobody watches and
// says what it sees, step by step.
func TestADirectoryMadeEnterableAgainIsSeenOnItsParentsEvent(t *testing.T) {
	const envBase = "KEEPWATCH_BASE"
	if !inChild(t) {
		if os.Geteuid() != 0 {
			t.Skip("changing user needs root")
		}
		base := nobodysTempDir(t)
		conf := filepath.Join(base, "conf")
		require.NoError(t, os.Mkdir(conf, 0o755))
		write(t, filepath.Join(conf, "config.yaml"), "v1\n")

		c := startChild(t, &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}, envBase+"="+base)
		c.await(t, "watching")
		// Recreated by root, 0700: nobody may not enter it.
		require.NoError(t, os.RemoveAll(conf))
		require.NoError(t, os.Mkdir(conf, 0o700))
		write(t, filepath.Join(conf, "config.yaml"), "v2\n")
		c.tell(t, "locked")
		c.await(t, "seen locked")
		require.NoError(t, os.Chmod(conf, 0o755))
		c.tell(t, "opened", strconv.FormatInt(time.Now().UnixNano(), 10))
		c.wait(t)
		return
	}

	path := filepath.Join(os.Getenv(envBase), "conf", "config.yaml")
	logs := &messages{}
	f, r := watchedByEvents(t, path, WithLogger(slog.New(teeHandler{testLogger(t).Handler(), logs})))
	modes := watchModes(t, f)
	require.Equal(t, ModeEvents, f.Stats().Mode)
	report(t, "watching")

	awaitParent(t, "locked")
	_, err := os.Stat(path)
	require.ErrorIs(t, err, fs.ErrPermission, "nobody may not reach the file")
	// The directory stays locked a while, as between a deploy tool's steps:
	// long enough for the watch to have taken it in, whatever it does
	// about it, and to have said so.
	time.Sleep(3 * defaultQuietWindow)
	t.Logf("while locked: mode %s, calls %s", f.Stats().Mode, r)
	report(t, "seen locked")

	ns, err := strconv.ParseInt(awaitParent(t, "opened"), 10, 64)
	require.NoError(t, err)
	opened := time.Unix(0, ns)
	require.Eventually(t, func() bool {
		c, ok := r.last()
		return ok && c.err == nil && c.data == "v2\n"
	}, waitFor, tick, "not delivered after the directory was made enterable (the re-check is off: only an event can deliver it); calls: %s", r)
	r.logDelay(t, "a directory made enterable again", opened)

	assert.Equal(t, []Mode{ModeEvents}, modes(), "the modes the watch was in")
	assert.Empty(t, logs.containing("polling"), "log records about polling")
	for _, err := range r.errs() {
		assert.NotErrorIs(t, err, ErrPolling)
	}
}

// watchModes samples f.Stats().Mode until the test ends, and returns what
// gives the modes seen so far, each once, in the order first seen.
func watchModes(t *testing.T, f *File) func() []Mode {
	var mu sync.Mutex
	var seen []Mode
	note := func() {
		m := f.Stats().Mode
		mu.Lock()
		defer mu.Unlock()
		if !slicesContains(seen, m) {
			seen = append(seen, m)
		}
	}
	note()
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		ticker := time.NewTicker(tick)
		defer ticker.Stop()
		for {
			select {
			case <-stop:
				return
			case <-ticker.C:
				note()
			}
		}
	}()
	// Registered after the watch's own cleanup, so it runs before it: the
	// watch is still up.
	t.Cleanup(func() { close(stop); <-done })
	return func() []Mode {
		note()
		mu.Lock()
		defer mu.Unlock()
		return append([]Mode(nil), seen...)
	}
}

func slicesContains(ms []Mode, m Mode) bool {
	for _, x := range ms {
		if x == m {
			return true
		}
	}
	return false
}

// messages keeps the message of every log record.
type messages struct {
	mu   sync.Mutex
	msgs []string
}

func (m *messages) add(msg string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.msgs = append(m.msgs, msg)
}

// containing returns the messages that contain s.
func (m *messages) containing(s string) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for _, msg := range m.msgs {
		if strings.Contains(msg, s) {
			out = append(out, msg)
		}
	}
	return out
}

// teeHandler passes records on to h and keeps their messages in m.
type teeHandler struct {
	h slog.Handler
	m *messages
}

func (t teeHandler) Enabled(context.Context, slog.Level) bool { return true }

func (t teeHandler) Handle(ctx context.Context, r slog.Record) error {
	t.m.add(r.Message)
	return t.h.Handle(ctx, r)
}

func (t teeHandler) WithAttrs(as []slog.Attr) slog.Handler { return teeHandler{t.h.WithAttrs(as), t.m} }

func (t teeHandler) WithGroup(g string) slog.Handler { return teeHandler{t.h.WithGroup(g), t.m} }

// renamedOverAtFirstRead renames a new file over path just before the read
// that starts the watch: after its watches were added, before it reads.
type renamedOverAtFirstRead struct {
	subject
	once sync.Once
	do   func()
}

func (s *renamedOverAtFirstRead) read(why decide.Reason, via *resolution, probe, first bool) reading {
	s.once.Do(s.do)
	return s.subject.read(why, via, probe, first)
}

// A file in a directory the process can traverse but not list, watched by
// its own watch alone, renamed over after that watch was added and before
// the read that starts the watch: the file renamed in is delivered, and so
// are its writes, through a watch of its own.
func TestAFileRenamedOverInAnUnlistableDirectoryBeforeTheFirstReadIsWatched(t *testing.T) {
	path, child := inUnlistableDirAsNobody(t)
	if !child {
		return
	}
	dir := filepath.Dir(path)
	f := Provider(path, WithLogger(testLogger(t)), WithErrorCallbacks(), WithRecheckInterval(0))
	_, _ = f.ReadBytes()
	f.t.subj = &renamedOverAtFirstRead{subject: f.t.subj, do: func() {
		tmp := filepath.Join(dir, "key.pem.new")
		write(t, tmp, "v2\n")
		require.NoError(t, os.Rename(tmp, path))
	}}
	r := newRecorder(f)
	require.NoError(t, f.Watch(r.cb))
	defer shutdown(t, f)
	r.waitContent(t, "v2\n")
	assert.Equal(t, ModeEvents, f.Stats().Mode)
	write(t, path, "v3\n") // in place, on the file renamed in
	r.waitContent(t, "v3\n")
}

// A read that fails for a reason of the process, not of the file: a service
// at its descriptor limit when kubelet swaps ..data. The read is retried
// until it succeeds; it is reported once, as what it is (EMFILE, not a
// missing or unreadable file); and the new content is delivered as soon as
// the file reads. The re-check is off, so that only the retry can deliver
// it.
//
// Go raises the soft RLIMIT_NOFILE at start-up, so the limit is lowered in
// a child process of the test, after its watch started.
func TestAReadThatFailsForTheProcesssOwnReasonIsRetried(t *testing.T) {
	if !inChild(t) {
		runChild(t, &syscall.SysProcAttr{})
		return
	}
	vol, err := kubevol.New(filepath.Join(t.TempDir(), "config"), map[string]string{"config.yaml": "generation: 0\n"})
	require.NoError(t, err)
	f, r := watchedByEvents(t, vol.Path("config.yaml"))
	// An update with descriptors to spare, so that the watch has settled on
	// the volume before the limit comes down.
	_, err = vol.Update(map[string]string{"config.yaml": "generation: 1\n"})
	require.NoError(t, err)
	r.waitContent(t, "generation: 1\n")
	awaitSteady(t, func() int { return len(f.Stats().WatchedDirs) })

	// The next generation is written while files can still be opened; the
	// swap (a symlink and a rename) needs no descriptor.
	gen, err := vol.WriteGeneration(map[string]string{"config.yaml": "generation: 2\n"})
	require.NoError(t, err)
	restore := exhaustDescriptors(t)
	defer restore()
	swapped := time.Now()
	require.NoError(t, vol.Swap(gen))

	reported := r.waitErr(t, syscall.EMFILE)
	if c, ok := r.last(); ok {
		t.Logf("EMFILE reported %v after the swap", c.at.Sub(swapped).Round(time.Microsecond))
	}
	assert.False(t, errors.Is(reported, fs.ErrNotExist), "reported as a missing file: %v", reported)
	assert.False(t, errors.Is(reported, fs.ErrPermission), "reported as an unreadable file: %v", reported)
	time.Sleep(200 * time.Millisecond) // a few retries fail meanwhile

	restore()
	freed := time.Now()
	require.Eventually(t, func() bool {
		c, ok := r.last()
		return ok && c.err == nil && c.data == "generation: 2\n"
	}, waitFor, tick, "not delivered after descriptors were free again (the re-check is off: only a retry of the read can deliver it); calls: %s", r)
	r.logDelay(t, "delivered once descriptors were free again", freed)
	assert.Len(t, r.errs(), 1, "reported once, not once per retry: %v", r.errs())
}
