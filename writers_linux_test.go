package file

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/keepwatch/file/internal/decide"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The kernel says whether anyone holds a file open for writing (this
// process included), to its owner or to root: a read lease is refused
// while anyone does.
func TestTheKernelSaysWhoHoldsAFileOpenForWriting(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	write(t, path, "v1\n")
	info, err := os.Stat(path)
	require.NoError(t, err)
	if os.Geteuid() != 0 && writersOf(path, info) == decide.WritersUnknown {
		t.Skip("leases are not to be had here")
	}
	assert.Equal(t, decide.WritersNone, writersOf(path, info), "no one has it open")
	w, err := os.OpenFile(path, os.O_WRONLY, 0)
	require.NoError(t, err)
	assert.Equal(t, decide.WritersOpen, writersOf(path, info), "a writer holds it open")
	require.NoError(t, w.Close())
	assert.Equal(t, decide.WritersNone, writersOf(path, info), "its writer closed it")
	r, err := os.Open(path)
	require.NoError(t, err)
	defer r.Close()
	assert.Equal(t, decide.WritersNone, writersOf(path, info), "a reader is no writer")

	other := filepath.Join(filepath.Dir(path), "other.yaml")
	write(t, other, "other\n")
	assert.Equal(t, decide.WritersUnknown, writersOf(other, info), "another file than the one asked of: nothing said")
}

// To a user who is not the file's owner (and has no CAP_LEASE), the kernel
// does not say: the watch falls back on what the file's times say.
func TestTheKernelSaysNothingOfWritersToOneNotTheOwner(t *testing.T) {
	const envPath = "KEEPWATCH_ROOTS_FILE"
	if inChild(t) {
		path := os.Getenv(envPath)
		info, err := os.Stat(path)
		require.NoError(t, err)
		assert.Equal(t, decide.WritersUnknown, writersOf(path, info))
		return
	}
	path := filepath.Join(nobodysTempDir(t), "config.yaml")
	write(t, path, "v1\n")
	require.NoError(t, os.Chmod(path, 0o644))
	asNobody(t, envPath+"="+path)
}

// A writer no event told of (it opened the file before a link was
// retargeted at it) and that holds the file open, pausing far longer than
// the watch once gave such a writer: the kernel says it holds the file,
// and the watch waits for its close, where it once read the first half.
func TestAWriterNoEventToldOfIsAwaitedWhileTheKernelSaysItHoldsTheFile(t *testing.T) {
	path, other := linkedLayout(t)
	t2 := filepath.Join(other, "t2.yaml")
	info, err := os.Stat(filepath.Join(other, "t1.yaml"))
	require.NoError(t, err)
	if writersOf(filepath.Join(other, "t1.yaml"), info) == decide.WritersUnknown {
		t.Skip("the kernel does not say who holds a file open for writing here")
	}
	_, r := watchedByEvents(t, path)
	whole := strings.Repeat("key: value\n", 100)
	w, err := os.OpenFile(t2, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	require.NoError(t, err)
	_, err = w.WriteString(whole[:len(whole)/2])
	require.NoError(t, err)
	retarget(t, path, t2)
	time.Sleep(300 * time.Millisecond) // and thinks, holding the file open
	_, err = w.WriteString(whole[len(whole)/2:])
	require.NoError(t, err)
	require.NoError(t, w.Close())
	r.waitContent(t, whole)
	assert.Equal(t, []string{whole}, r.contents(), "never half of it")
}
