package file

import (
	"errors"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Where no events can be had, a change still arrives within seconds, with
// the default options: the fallback polls on its own interval, not at the
// 30 s re-check. Here inotify is blocked by a seccomp filter, as in
// sandboxes (gVisor-like runtimes) where inotify_init1 fails with ENOSYS;
// the filter is installed in a child process, before its first watch.
// (A FUSE mount, the other case, is tested in tests/fuse.)
func TestWhereInotifyIsBlockedChangesArriveWithinSeconds(t *testing.T) {
	if !inChild(t) {
		runChild(t, &syscall.SysProcAttr{})
		return
	}
	blockInotify(t)
	path := filepath.Join(t.TempDir(), "config.yaml")
	write(t, path, "v1\n")
	start := time.Now()
	f, r := watched(t, path) // the default options; problems reach the recorder
	require.Eventually(t, func() bool { return f.Stats().Mode == ModePolling }, waitFor, tick,
		"the watch polls without inotify; mode %s, calls %s", f.Stats().Mode, r)
	t.Logf("polling %v after Watch", time.Since(start).Round(time.Microsecond))
	for _, err := range r.errs() {
		assert.ErrorIs(t, err, ErrPolling, "the one problem is that it polls")
		assert.True(t, errors.Is(err, syscall.ENOSYS), "and why: %v", err)
	}

	start = time.Now()
	write(t, path, "v2\n") // in place
	waitPolled(t, r, "v2\n", "an in-place write")
	r.logDelay(t, "in-place write, inotify blocked", start)

	start = time.Now()
	replace(t, path, "v3\n") // rename-over
	waitPolled(t, r, "v3\n", "a rename-over")
	r.logDelay(t, "rename-over, inotify blocked", start)
	assert.Equal(t, []string{"v2\n", "v3\n"}, r.contents())
}

// waitPolled waits for a change that only polling can find to be delivered.
func waitPolled(t *testing.T, r *recorder, want, what string) {
	t.Helper()
	require.Eventually(t, func() bool {
		c, ok := r.last()
		return ok && c.err == nil && c.data == want
	}, waitFor, tick, "%s not delivered in %v with events unavailable: the fallback polls too seldom; calls: %s",
		what, waitFor, r)
}
