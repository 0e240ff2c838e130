package osfile

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/keepwatch/file/internal/fsinfo"
)

// A read's first stat is a statx: it says what fstat says, to the field,
// and names the mount the file was opened through.
func TestTheFirstStatIsFstatsAndNamesTheMount(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(path, []byte("a: 1\n"), 0o640))
	r, err := openToRead(path)
	require.NoError(t, err)
	defer r.Close()
	f := r.(*rawFile)
	info, err := f.Stat()
	require.NoError(t, err)
	var want syscall.Stat_t
	require.NoError(t, syscall.Fstat(f.fd, &want))
	assert.Equal(t, want, *info.Sys().(*syscall.Stat_t))
	if f.mount == 0 {
		t.Skip("this kernel gives no unique mount ID (Linux 6.8 and later do)")
	}
	other, err := openToRead(path)
	require.NoError(t, err)
	defer other.Close()
	_, err = other.Stat()
	require.NoError(t, err)
	assert.Equal(t, f.mount, other.(*rawFile).mount)
}

// Reads through one mount ask the kernel for its filesystem's kind once,
// however many files they read, whether they ask of writers or not.
func TestReadsAskTheFilesystemOncePerMount(t *testing.T) {
	dir := t.TempDir()
	for _, ask := range []bool{false, true} {
		path := filepath.Join(dir, "first")
		require.NoError(t, os.WriteFile(path, []byte("a: 1\n"), 0o644))
		_, err := ReadFile(path, path, 1<<20, ask)
		require.NoError(t, err)
		before := fsinfo.StatfsCalls()
		for i := range 5 {
			path := filepath.Join(dir, "new"+string(rune('a'+i)))
			require.NoError(t, os.WriteFile(path, []byte("a: 1\n"), 0o644))
			_, err := ReadFile(path, path, 1<<20, ask)
			require.NoError(t, err)
		}
		r, err := openToRead(path)
		require.NoError(t, err)
		_, err = r.Stat()
		require.NoError(t, err)
		mount := r.(*rawFile).mount
		r.Close()
		if mount == 0 {
			t.Skip("this kernel gives no unique mount ID (Linux 6.8 and later do)")
		}
		assert.Equal(t, before, fsinfo.StatfsCalls(), "ask %v: a read through a known mount asked its kind", ask)
	}
}

// Where statx is not to be had (an old kernel, a seccomp filter), the
// first stat is an fstat, with no mount named, and reads work as before.
func TestWithoutStatxReadsFstat(t *testing.T) {
	noStatx.Store(true)
	defer noStatx.Store(false)
	path := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(path, []byte("a: 1\n"), 0o644))
	r, err := openToRead(path)
	require.NoError(t, err)
	defer r.Close()
	info, err := r.Stat()
	require.NoError(t, err)
	assert.Zero(t, r.(*rawFile).mount)
	assert.EqualValues(t, 5, info.Size())
	before := fsinfo.StatfsCalls()
	res, err := ReadFile(path, path, 1<<20, true)
	require.NoError(t, err)
	assert.Equal(t, "a: 1\n", string(res.Data))
	assert.Equal(t, before+1, fsinfo.StatfsCalls(), "with no mount named, a read asks the kernel")
}
