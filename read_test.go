package file

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Bad input gets a clear error, never a hang or an endless read.

func TestReadBytesRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))

	for name, path := range map[string]string{
		"directory":        dir,
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

func TestReadBytesRefusesAFileOverTheLimit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big")
	write(t, path, strings.Repeat("x", 1025))
	_, err := Provider(path, WithMaxSize(1024)).ReadBytes()
	require.ErrorIs(t, err, ErrFileTooLarge)
	assert.Contains(t, err.Error(), path)

	write(t, path, strings.Repeat("x", 1024))
	b, err := Provider(path, WithMaxSize(1024)).ReadBytes()
	require.NoError(t, err)
	assert.Len(t, b, 1024)
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

func TestReadFileStopsAtTheLimitOnAnEndlessFile(t *testing.T) {
	// /proc files report size 0 and are read anyway; an endless one must
	// stop at the limit rather than exhaust memory.
	b, err := readAtMost(endless{}, 0, 1<<20)
	require.NoError(t, err)
	assert.Len(t, b, 1<<20+1)
}

type endless struct{}

func (endless) Read(p []byte) (int, error) { return len(p), nil }
