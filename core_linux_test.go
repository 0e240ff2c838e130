package file

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// A directory on the way that the process may not enter: the path does not
// resolve, and Watch fails with the lookup's EACCES, as the stock
// provider's does; WithWaitForPath starts the watch, which reports it. The
// root parent makes the tree; a child running as nobody watches.
func TestWatchWhereADirectoryCannotBeEnteredFails(t *testing.T) {
	const envDir = "KEEPWATCH_LOCKED_DIR"
	if !inChild(t) {
		if os.Geteuid() != 0 {
			t.Skip("changing user needs root")
		}
		base := nobodysTempDir(t)
		dir := filepath.Join(base, "locked")
		require.NoError(t, os.Mkdir(dir, 0o700))
		require.NoError(t, os.Chmod(dir, 0o700))
		write(t, filepath.Join(dir, "config.yaml"), "v1\n")
		asNobody(t, envDir+"="+dir)
		return
	}
	path := filepath.Join(os.Getenv(envDir), "config.yaml")
	err := Provider(path, WithLogger(testLogger(t))).Watch(func(any, error) {})
	assertUnresolved(t, err, path, fs.ErrPermission)

	_, r := watched(t, path, WithWaitForPath())
	r.waitErr(t, fs.ErrPermission)
}
