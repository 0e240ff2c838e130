package file

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/keepwatch/file/internal/decide"

	"github.com/fsnotify/fsnotify"
	"github.com/keepwatch/file/internal/events"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// These tests drive the supervisor through the notifier seam, in a synctest
// bubble: time is virtual, so backoff delays are checked exactly and no test
// sleeps for real.

const (
	testBackoffMin = 100 * time.Millisecond
	testBackoffMax = 1600 * time.Millisecond
)

func TestSessionFaultsAreReportedOnceAndRecoveredWithAReRead(t *testing.T) {
	faults := map[string]struct {
		inject func(n *fakeNotifier)
		cause  error // what the reported error wraps, besides ErrWatchInterrupted
	}{
		"error":         {func(n *fakeNotifier) { n.fail(syscall.EIO) }, syscall.EIO},
		"overflow":      {func(n *fakeNotifier) { n.fail(fsnotify.ErrEventOverflow) }, fsnotify.ErrEventOverflow},
		"events closed": {func(n *fakeNotifier) { n.closeEvents() }, events.ErrEventsClosed},
		"errors closed": {func(n *fakeNotifier) { n.closeErrors() }, events.ErrErrorsClosed},
	}
	for name, fault := range faults {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "config.yaml")
				write(t, path, "v1\n")
				_, r, fs := watchedFake(t, path)
				n1 := fs.last()

				write(t, path, "v2\n") // its event is lost in the fault
				fault.inject(n1)
				synctest.Wait()
				errs := r.errs()
				require.Len(t, errs, 1)
				assert.ErrorIs(t, errs[0], ErrWatchInterrupted)
				assert.ErrorIs(t, errs[0], fault.cause)
				assert.Contains(t, errs[0].Error(), path)
				assert.False(t, send(n1, path, decide.OpWrite), "the broken notifier is closed")

				// Re-armed after the first backoff step, and the re-read
				// delivers the update made while the watch was down.
				time.Sleep(testBackoffMin/2 - time.Nanosecond)
				synctest.Wait()
				assert.Equal(t, 1, fs.calls())
				time.Sleep(testBackoffMin/2 + time.Nanosecond)
				synctest.Wait()
				assert.Equal(t, 2, fs.calls())
				assert.Equal(t, []string{"v2\n"}, r.contents())

				// The new session works.
				n2 := fs.last()
				write(t, path, "v3\n")
				send(n2, path, decide.OpWrite)
				time.Sleep(defaultQuietWindow)
				synctest.Wait()
				assert.Equal(t, []string{"v2\n", "v3\n"}, r.contents())
			})
		})
	}
}

func TestFailingConstructorBacksOffExponentiallyAndReportsOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "config.yaml")
		write(t, path, "v1\n")
		fs := &fakes{}
		fs.newErrs = []error{syscall.EIO, syscall.EIO, syscall.EIO, syscall.EIO, syscall.EIO, syscall.EIO}
		_, r := watched(t, path, withNotifier(fs.new), withoutWriterProbe(), withBackoff(testBackoffMin, testBackoffMax), WithRecheckInterval(0))

		write(t, path, "v2\n")
		time.Sleep(10 * time.Second)
		synctest.Wait()
		require.Equal(t, 7, fs.calls(), "six failures, then armed")

		// Equal jitter: each delay is in [d/2, d] for d = 100ms, 200ms, ...
		// capped at 1.6s.
		d := testBackoffMin
		for i, gap := range fs.gaps() {
			assert.GreaterOrEqual(t, gap, d/2, "gap %d", i)
			assert.LessOrEqual(t, gap, d, "gap %d", i)
			d = min(2*d, testBackoffMax)
		}
		errs := r.errs()
		require.Len(t, errs, 1, "one ongoing problem, one report: %s", r)
		assert.ErrorIs(t, errs[0], ErrWatchInterrupted)
		assert.ErrorIs(t, errs[0], syscall.EIO)
		assert.NotErrorIs(t, errs[0], ErrPolling)
		// Each failed attempt still re-read the file.
		assert.Equal(t, []string{"v2\n"}, r.contents())
	})
}

// An Add that fails because the directory vanished (a race, or a broken
// notifier) is retried with the backoff.
func TestFailingAddIsReportedOnceAndRetried(t *testing.T) {
	for _, errno := range []syscall.Errno{syscall.ENOENT, syscall.EIO} {
		t.Run(errno.Error(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "config.yaml")
				write(t, path, "v1\n")
				fs := &fakes{}
				fs.addErr = func(string) error { return errno }
				_, r := watched(t, path, withNotifier(fs.new), withoutWriterProbe(), withBackoff(testBackoffMin, testBackoffMax), WithRecheckInterval(0))

				time.Sleep(time.Second)
				synctest.Wait()
				require.Greater(t, fs.calls(), 3)
				require.Len(t, r.errs(), 1)
				assert.ErrorIs(t, r.errs()[0], errno)

				fs.set(func(fs *fakes) { fs.addErr = nil })
				write(t, path, "v2\n")
				time.Sleep(testBackoffMax)
				synctest.Wait()
				assert.Equal(t, []string{"v2\n"}, r.contents())
				assert.Equal(t, []string{filepath.Dir(path)}, fs.last().watched())
			})
		})
	}
}

func TestBackoffStartsAgainAfterAHealthyRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "config.yaml")
		write(t, path, "v1\n")
		_, r, fs := watchedFake(t, path)

		// overflow breaks the session and returns how long it took to
		// re-arm it.
		overflow := func() time.Duration {
			start := time.Now()
			fs.last().fail(fsnotify.ErrEventOverflow)
			time.Sleep(testBackoffMax + time.Nanosecond)
			synctest.Wait()
			return fs.lastMadeAt().Sub(start)
		}
		inStep := func(d, step time.Duration) {
			t.Helper()
			assert.GreaterOrEqual(t, d, step/2)
			assert.LessOrEqual(t, d, step)
		}
		inStep(overflow(), testBackoffMin)   // the first failure
		inStep(overflow(), 2*testBackoffMin) // failing again soon after
		inStep(overflow(), 4*testBackoffMin)
		time.Sleep(testBackoffMax) // a healthy run
		inStep(overflow(), testBackoffMin)
		assert.Len(t, r.errs(), 4, "each overflow after a re-arm is a new problem")
	})
}

func TestCloseErrorsDoNotStopTheWatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "config.yaml")
		write(t, path, "v1\n")
		_, r, fs := watchedFake(t, path)
		fs.set(func(fs *fakes) { fs.closeErr = errors.New("close failed") })

		write(t, path, "v2\n")
		fs.last().fail(syscall.EIO)
		time.Sleep(testBackoffMin)
		synctest.Wait()
		assert.Equal(t, []string{"v2\n"}, r.contents())
		write(t, path, "v3\n")
		send(fs.last(), path, decide.OpCreate)
		synctest.Wait()
		assert.Equal(t, []string{"v2\n", "v3\n"}, r.contents())
	})
}

func TestShutdownDuringBackoffReturnsAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "config.yaml")
		write(t, path, "v1\n")
		fs := &fakes{newErrs: []error{syscall.EIO}}
		f := Provider(path, withNotifier(fs.new), withoutWriterProbe(), withBackoff(time.Hour, time.Hour), WithLogger(testLogger(t)))
		require.NoError(t, f.Watch(func(any, error) {}))
		synctest.Wait()
		start := time.Now()
		require.NoError(t, f.Shutdown(context.Background()))
		assert.Zero(t, time.Since(start))
		assert.Equal(t, 1, fs.calls())
	})
}

// While no loop can be opened, each restart's read is judged before it is
// handed on, as a loop's first read would be: one made while a writer holds
// the file, half-written, is not delivered; the finished file is, once.
func TestRestartReadWhileAWriterHoldsTheFileIsNotDelivered(t *testing.T) {
	if !kernelTellsWriters(t) {
		t.Skip("the kernel does not say here who holds a file open for writing")
	}
	synctest.Test(t, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "config.yaml")
		write(t, path, "v1\n")
		fs := &fakes{newErrs: slices.Repeat([]error{syscall.EIO}, 20)}
		_, r := watched(t, path, withNotifier(fs.new), withBackoff(testBackoffMin, testBackoffMin), WithRecheckInterval(0))

		f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
		require.NoError(t, err)
		_, err = f.WriteString("key: ha")
		require.NoError(t, err)
		time.Sleep(5 * testBackoffMin) // restarts, each of which reads
		synctest.Wait()
		require.Greater(t, fs.calls(), 3)
		assert.Empty(t, r.contents(), "a read a writer was in is held")

		_, err = f.WriteString("lf-done\n")
		require.NoError(t, err)
		require.NoError(t, f.Close())
		time.Sleep(5 * testBackoffMin)
		synctest.Wait()
		assert.Equal(t, []string{"key: half-done\n"}, r.contents())
	})
}

// With nothing read before Watch, Watch's first read is the baseline: what
// the application is taken to have. A first read that a writer was in is
// held: if the writer goes on, what it finishes is news and delivered; if
// it had finished, its content is the baseline after all, and not
// delivered.
func TestWatchFirstReadWhileAWriterHoldsTheFile(t *testing.T) {
	if !kernelTellsWriters(t) {
		t.Skip("the kernel does not say here who holds a file open for writing")
	}
	for _, c := range []struct {
		name, rest string
		want       []string
	}{
		{"the writer goes on", "lf-done\n", []string{"key: half-done\n"}},
		{"the writer had finished", "", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "config.yaml")
				write(t, path, "v1\n")
				f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
				require.NoError(t, err)
				_, err = f.WriteString("key: ha")
				require.NoError(t, err)

				fs := &fakes{}
				p := Provider(path, withNotifier(fs.new), withBackoff(testBackoffMin, testBackoffMax), WithRecheckInterval(0), WithLogger(testLogger(t)))
				r := newRecorder(p)
				require.NoError(t, p.Watch(r.cb)) // nothing read before
				t.Cleanup(func() { shutdown(t, p) })
				advance(testQuiet)

				_, err = f.WriteString(c.rest)
				require.NoError(t, err)
				require.NoError(t, f.Close())
				send(fs.last(), path, decide.OpWrite)
				advance(time.Second)
				assert.Equal(t, c.want, r.contents())
			})
		})
	}
}
