//go:build linux

package writers

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTheKernelSaysWhoWrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(path, []byte("x"), 0o644))
	r, err := os.Open(path)
	require.NoError(t, err)
	defer r.Close()
	got, err := On(int(r.Fd()))
	if got == Unknown {
		t.Skipf("leases are not to be had here: %v", err)
	}
	assert.Equal(t, None, got)
	w, err := os.OpenFile(path, os.O_WRONLY, 0)
	require.NoError(t, err)
	got, _ = On(int(r.Fd()))
	assert.Equal(t, Open, got, "a writer holds it open")
	require.NoError(t, w.Close())
	got, _ = On(int(r.Fd()))
	assert.Equal(t, None, got, "its writer closed it")
}
