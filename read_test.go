package file

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Bad input gets a clear error, never a hang or an endless read.

func TestReadBytesRefusesADirectory(t *testing.T) {
	dir := t.TempDir()
	b, err := Provider(dir).ReadBytes()
	require.ErrorIs(t, err, ErrNotRegularFile)
	assert.Nil(t, b)
	assert.Contains(t, err.Error(), dir)
	assert.Contains(t, err.Error(), "directory")
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
