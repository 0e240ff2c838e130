package fsinfo

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Where FineTimes says so, a write right after a stat, however soon,
// gives the file another change time: the kernel's word that it changed.
func TestFineTimesTellEveryChangeAfterAStat(t *testing.T) {
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "f"))
	require.NoError(t, err)
	defer f.Close()
	if !FineTimesAt(int(f.Fd()), 0) {
		t.Skip("this kernel or filesystem stamps changes coarsely")
	}
	var before, after syscall.Stat_t
	for range 1000 {
		require.NoError(t, syscall.Fstat(int(f.Fd()), &before))
		_, err := f.Write([]byte("x"))
		require.NoError(t, err)
		require.NoError(t, syscall.Fstat(int(f.Fd()), &after))
		require.NotEqual(t, before.Ctim, after.Ctim, "a write after a stat kept the change time")
	}
	assert.False(t, FineTimes(0x6969), "nfs")
}
