//go:build unix

package file

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Named pipes and devices, which Windows's filesystem does not have: what is
// not a regular file gets a clear error, never a read that hangs.

func TestReadBytesRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))

	for name, path := range map[string]string{
		"named pipe":       fifo,
		"character device": "/dev/zero",
	} {
		t.Run(name, func(t *testing.T) {
			b, err := Provider(path).ReadBytes()
			require.ErrorIs(t, err, ErrNotRegularFile)
			assert.Nil(t, b)
			assert.Contains(t, err.Error(), path)
			assert.Contains(t, err.Error(), name)
		})
	}
}

func TestWatchReportsBadInputAndDeliversWhenFixed(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.yaml")
	require.NoError(t, syscall.Mkfifo(path, 0o644))
	_, r := watched(t, path, WithMaxSize(8))
	err := r.waitErr(t, ErrNotRegularFile)
	assert.Contains(t, err.Error(), path)

	require.NoError(t, os.Remove(path))
	r.waitErr(t, fs.ErrNotExist)
	replace(t, path, "too large\n")
	r.waitErr(t, ErrFileTooLarge)
	replace(t, path, "ok\n")
	r.waitContent(t, "ok\n")
	assert.Len(t, r.errs(), 3, "fifo, missing, too large: %s", r)
}
