package fsinfo

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// uniqueMount returns the unique ID of the mount f was opened through, or
// skips where the kernel does not give one (before Linux 6.8).
func uniqueMount(t *testing.T, f *os.File) uint64 {
	t.Helper()
	var stx unix.Statx_t
	require.NoError(t, unix.Statx(int(f.Fd()), "", unix.AT_EMPTY_PATH, unix.STATX_MNT_ID_UNIQUE, &stx))
	if stx.Mask&unix.STATX_MNT_ID_UNIQUE == 0 {
		t.Skip("this kernel gives no unique mount ID (Linux 6.8 and later do)")
	}
	return stx.Mnt_id
}

// Magic says what fstatfs says, and asks it once per mount: a read through
// a mount it knows costs no fstatfs. Without a mount ID it asks each time.
func TestMagicAsksTheKernelOncePerMount(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "f"))
	require.NoError(t, err)
	defer f.Close()
	mount := uniqueMount(t, f)
	var st unix.Statfs_t
	require.NoError(t, unix.Fstatfs(int(f.Fd()), &st))

	before := StatfsCalls()
	for range 3 {
		m, err := Magic(int(f.Fd()), mount)
		require.NoError(t, err)
		assert.Equal(t, int64(st.Type), m)
	}
	assert.LessOrEqual(t, StatfsCalls()-before, 1, "the kernel was asked more than once for one mount")

	before = StatfsCalls()
	for range 3 {
		m, err := Magic(int(f.Fd()), 0)
		require.NoError(t, err)
		assert.Equal(t, int64(st.Type), m)
	}
	assert.Equal(t, 3, StatfsCalls()-before, "without a mount ID, each call asks")
}

// Two mounts of other filesystems keep their own answers.
func TestMagicKeepsEachMountsOwn(t *testing.T) {
	shm, err := os.CreateTemp("/dev/shm", "keepwatch-magic-")
	if err != nil {
		t.Skip("no /dev/shm:", err)
	}
	defer os.Remove(shm.Name())
	defer shm.Close()
	f, err := os.Create(filepath.Join(t.TempDir(), "f"))
	require.NoError(t, err)
	defer f.Close()
	for _, file := range []*os.File{f, shm, f, shm} {
		var st unix.Statfs_t
		require.NoError(t, unix.Fstatfs(int(file.Fd()), &st))
		m, err := Magic(int(file.Fd()), uniqueMount(t, file))
		require.NoError(t, err)
		assert.Equal(t, int64(st.Type), m, file.Name())
	}
}

// A descriptor that is not open is an error, and nothing is kept for it.
func TestMagicOfABadDescriptorIsAnError(t *testing.T) {
	_, err := Magic(-1, 1<<62)
	require.Error(t, err)
	mounts.Lock()
	_, kept := mounts.magic[1<<62]
	mounts.Unlock()
	assert.False(t, kept)
}
