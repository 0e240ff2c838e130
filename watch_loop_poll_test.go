package file

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/keepwatch/file/internal/decide"

	"github.com/fsnotify/fsnotify"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// When inotify cannot be had, the provider polls, every couple of seconds
// whatever the re-check interval, says so once, and goes back to events
// when they work again.
func TestEventsUnavailableFallsBackToPollingAndBack(t *testing.T) {
	for _, c := range []struct {
		name  string
		setup func(fs *fakes, errno syscall.Errno)
		errno syscall.Errno
	}{
		{"instances exhausted", func(fs *fakes, e syscall.Errno) { fs.newErrs = []error{e, e, e, e, e, e, e, e} }, syscall.EMFILE},
		{"watches exhausted", func(fs *fakes, e syscall.Errno) { fs.addErr = func(string) error { return e } }, syscall.ENOSPC},
		{"watch refused", func(fs *fakes, e syscall.Errno) { fs.addErr = func(string) error { return e } }, syscall.EACCES},
		{"inotify blocked by a sandbox", func(fs *fakes, e syscall.Errno) { fs.newErrs = []error{e, e, e, e, e, e, e, e} }, syscall.ENOSYS},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "config.yaml")
				write(t, path, "v1\n")
				fs := &fakes{}
				c.setup(fs, c.errno)
				const every = fallbackPollInterval
				_, r := watched(t, path, withNotifier(fs.new), withoutWriterProbe(), WithQuietWindow(testQuiet))
				synctest.Wait()
				calls := fs.calls()

				errs := r.errs()
				require.Len(t, errs, 1)
				assert.ErrorIs(t, errs[0], ErrPolling)
				assert.ErrorIs(t, errs[0], ErrWatchInterrupted)
				assert.ErrorIs(t, errs[0], c.errno)
				assert.Contains(t, errs[0].Error(), "polling every 2s")

				// Polling sees a change no event reports.
				replace(t, path, "v2\n")
				advance(every + testQuiet)
				assert.Equal(t, []string{"v2\n"}, r.contents())
				assert.Equal(t, calls, fs.calls(), "no retry of events before %s", decide.EventRetryInterval)

				// Events still unavailable at the next try: still polling,
				// nothing reported again.
				advance(decide.EventRetryInterval)
				assert.Greater(t, fs.calls(), calls)
				assert.Len(t, r.errs(), 1)

				// Once they work, the provider is back on events: a change is
				// delivered on its event, without waiting for a poll.
				fs.set(func(fs *fakes) { fs.newErrs, fs.addErr = nil, nil })
				advance(decide.EventRetryInterval)
				n := fs.last()
				require.NotNil(t, n)
				assert.Equal(t, []string{filepath.Dir(path)}, n.watched())
				replace(t, path, "v3\n")
				send(n, path, decide.OpCreate)
				synctest.Wait()
				assert.Equal(t, []string{"v2\n", "v3\n"}, r.contents())
				assert.Len(t, r.errs(), 1)
			})
		})
	}
}

func TestForcedPollingUsesNoEvents(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "config.yaml")
		write(t, path, "v1\n")
		fs := &fakes{}
		_, r := watched(t, path, withNotifier(fs.new), withoutWriterProbe(), WithPolling(time.Second), WithRecheckInterval(time.Hour),
			WithQuietWindow(testQuiet))
		synctest.Wait()

		replace(t, path, "v2\n")
		advance(time.Second - time.Nanosecond)
		assert.Empty(t, r.calls())
		advance(time.Nanosecond + testQuiet)
		assert.Equal(t, []string{"v2\n"}, r.contents())
		advance(time.Hour)
		assert.Zero(t, fs.calls(), "no notifier at all")
		assert.Empty(t, r.errs(), "polling was asked for: nothing to report")
	})
}

// On NFS, SMB or FUSE, changes made elsewhere come with no event: the
// provider keeps events for local changes, polls for the rest, and says so
// once.
func TestAFileOnAFilesystemWithoutEventsIsAlsoPolled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "config.yaml")
		write(t, path, "v1\n")
		nfs := func(string) (string, bool) { return "nfs", true }
		_, r, fs := watchedFake(t, path, withFSType(nfs), WithQuietWindow(testQuiet))
		errs := r.errs()
		require.Len(t, errs, 1)
		assert.ErrorIs(t, errs[0], ErrPolling)
		assert.NotErrorIs(t, errs[0], ErrWatchInterrupted)
		assert.Contains(t, errs[0].Error(), "nfs")

		replace(t, path, "v2\n") // on another host: no event
		advance(fallbackPollInterval + testQuiet)
		assert.Equal(t, []string{"v2\n"}, r.contents(), "polled although re-checks are off")

		// A restart does not repeat the notice.
		fs.last().fail(fsnotify.ErrEventOverflow)
		advance(testBackoffMax)
		require.Len(t, r.errs(), 2)
		assert.ErrorIs(t, r.errs()[1], fsnotify.ErrEventOverflow)
		advance(time.Hour)
		assert.Len(t, r.errs(), 2)
	})
}

// A write that keeps the file's size, made in the same tick of the
// filesystem's clock as the read before it, leaves its stat as it was:
// polling reads such a racily read file again, rather than trust the stat,
// until a read comes a tick after its last write. (Real time: the tick is
// the filesystem's.)
func TestAPollReadsAFileWrittenWithinATickOfItsLastRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	write(t, path, "v1\n")
	before, err := os.Stat(path)
	require.NoError(t, err)
	f, r := watched(t, path, WithPolling(10*time.Millisecond), WithRecheckInterval(time.Hour))
	require.Eventually(t, func() bool { return !f.Stats().LastRead.IsZero() }, waitFor, tick, "the watch's first read")
	if f.Stats().LastRead.Sub(before.ModTime()) >= 900*time.Millisecond {
		t.Skip("the watch's first read came a second after the write: no longer in its tick")
	}

	write(t, path, "v2\n") // in place, same size
	require.NoError(t, os.Chtimes(path, before.ModTime(), before.ModTime()), "and in the same tick")
	r.waitContent(t, "v2\n")
	assert.Equal(t, []string{"v2\n"}, r.contents())
}
