//go:build unix

package file

import (
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/keepwatch/file/internal/decide"

	"github.com/keepwatch/file/kubevol"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// A kubelet payload edited in place to empty, long after its swap, where
// no close is reported (the fsnotify backend): each wait's end finds it
// written after the swap, but not lately. It is delivered once a doubt's
// window has passed, not waited on for good.
func TestAPayloadEmptiedInPlaceLongAgoIsDelivered(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "vol")
		v, err := kubevol.New(dir, map[string]string{"config.yaml": "v1\n"})
		require.NoError(t, err)
		// The swap, in the bubble's time: a second ago.
		swapped := unix.NsecToTimespec(time.Now().Add(-time.Second).UnixNano())
		require.NoError(t, unix.UtimesNanoAt(unix.AT_FDCWD, filepath.Join(dir, dataLink),
			[]unix.Timespec{swapped, swapped}, unix.AT_SYMLINK_NOFOLLOW))
		fs := &fakes{}
		_, r := watched(t, v.Path("config.yaml"), withNotifier(fs.new), withoutWriterProbe(), WithRecheckInterval(0), WithQuietWindow(testQuiet))
		synctest.Wait()

		payload, err := filepath.EvalSymlinks(v.Path("config.yaml"))
		require.NoError(t, err)
		write(t, payload, "")
		stamp(t, payload)
		send(fs.last(), payload, decide.OpWrite)
		advance(20 * testQuiet)
		assert.Equal(t, []string{""}, r.contents())
	})
}
