package osfile

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/keepwatch/file/internal/decide"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The kernel says whether anyone holds a file open for writing (this
// process included), to its owner or to root: a read lease is refused
// while anyone does.
func TestTheKernelSaysWhoHoldsAFileOpenForWriting(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(path, []byte("v1\n"), 0o644))
	info, err := os.Stat(path)
	require.NoError(t, err)
	if os.Geteuid() != 0 && WritersOf(path, info) == decide.WritersUnknown {
		t.Skip("leases are not to be had here")
	}
	assert.Equal(t, decide.WritersNone, WritersOf(path, info), "no one has it open")
	w, err := os.OpenFile(path, os.O_WRONLY, 0)
	require.NoError(t, err)
	assert.Equal(t, decide.WritersOpen, WritersOf(path, info), "a writer holds it open")
	require.NoError(t, w.Close())
	assert.Equal(t, decide.WritersNone, WritersOf(path, info), "its writer closed it")
	r, err := os.Open(path)
	require.NoError(t, err)
	defer r.Close()
	assert.Equal(t, decide.WritersNone, WritersOf(path, info), "a reader is no writer")

	other := filepath.Join(filepath.Dir(path), "other.yaml")
	require.NoError(t, os.WriteFile(other, []byte("other\n"), 0o644))
	assert.Equal(t, decide.WritersUnknown, WritersOf(other, info), "another file than the one asked of: nothing said")
}
