package chain

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Readlink reads a link's target as os.Readlink does, a long one too, and
// on Linux a short one into a buffer of its own: the path as the kernel
// takes it and the target are all it allocates.
func TestReadlink(t *testing.T) {
	dir := t.TempDir()
	short, long := filepath.Join(dir, "..data"), filepath.Join(dir, "long")
	target := "..2026_11_29_06_39_12.3173774733"
	require.NoError(t, os.Symlink(target, short))
	require.NoError(t, os.Symlink(strings.Repeat("x", 300), long))
	got, err := Readlink(short)
	require.NoError(t, err)
	assert.Equal(t, target, got)
	got, err = Readlink(long)
	require.NoError(t, err)
	assert.Equal(t, strings.Repeat("x", 300), got)
	_, err = Readlink(filepath.Join(dir, "none"))
	assert.ErrorIs(t, err, os.ErrNotExist)
	if runtime.GOOS == "linux" {
		allocs := testing.AllocsPerRun(100, func() { _, _ = Readlink(short) })
		assert.LessOrEqual(t, allocs, 2.0)
	}
}
