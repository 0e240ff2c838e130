package file

import (
	"context"
	"github.com/keepwatch/file/internal/decide"
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
func (t teeHandler) WithGroup(g string) slog.Handler       { return teeHandler{t.h.WithGroup(g), t.m} }

// renamedOverAtFirstRead renames a new file over path just before the read
// that starts the watch: after its watches were added, before it reads.
type renamedOverAtFirstRead struct {
	subject
	once sync.Once
	do   func()
}

func (s *renamedOverAtFirstRead) read(why decide.Reason, via *resolution) reading {
	s.once.Do(s.do)
	return s.subject.read(why, via)
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
