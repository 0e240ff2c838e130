package file

import (
	"errors"
	"io/fs"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/keepwatch/file/kubevol"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
