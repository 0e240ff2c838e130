//go:build linux

package writers

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/keepwatch/file/internal/decide"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTheKernelSaysWhoWrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(path, []byte("x"), 0o644))
	r, err := os.Open(path)
	require.NoError(t, err)
	defer r.Close()
	got, err := On(int(r.Fd()), 0)
	if got == decide.WritersUnknown {
		t.Skipf("leases are not to be had here: %v", err)
	}
	assert.Equal(t, decide.WritersNone, got)
	w, err := os.OpenFile(path, os.O_WRONLY, 0)
	require.NoError(t, err)
	got, _ = On(int(r.Fd()), 0)
	assert.Equal(t, decide.WritersOpen, got, "a writer holds it open")
	require.NoError(t, w.Close())
	got, _ = On(int(r.Fd()), 0)
	assert.Equal(t, decide.WritersNone, got, "its writer closed it")
}

// Hold keeps writers out until Release: a writer's open that will not wait
// is refused meanwhile, and goes through after.
func TestHoldKeepsWritersOutUntilRelease(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(path, []byte("x"), 0o644))
	r, err := os.Open(path)
	require.NoError(t, err)
	defer r.Close()
	fd := int(r.Fd())
	got, err := Hold(fd, 0)
	if got == decide.WritersUnknown {
		t.Skipf("leases are not to be had here: %v", err)
	}
	require.Equal(t, decide.WritersNone, got)
	_, err = os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0)
	assert.ErrorIs(t, err, syscall.EWOULDBLOCK, "a writer is kept out while the lease is held")
	Release(fd)
	w, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0)
	require.NoError(t, err, "and let in after")
	require.NoError(t, w.Close())
}
