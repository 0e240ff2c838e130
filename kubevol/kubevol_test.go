package kubevol

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The volume is laid out as kubelet lays it out: a payload directory,
// ..data pointing at it, a link per key; keys come and go with updates,
// and the old payload goes.
func TestAVolumeLooksAsKubeletsDoes(t *testing.T) {
	v, err := New(filepath.Join(t.TempDir(), "cm"), map[string]string{"a": "1", "b": "2"})
	require.NoError(t, err)
	first, err := v.Generation()
	require.NoError(t, err)
	assert.Regexp(t, `^\.\.\d{4}_\d\d_\d\d_\d\d_\d\d_\d\d\.\d+$`, first)
	for _, key := range []string{"a", "b"} {
		target, err := os.Readlink(v.Path(key))
		require.NoError(t, err)
		assert.Equal(t, filepath.Join("..data", key), target)
	}

	changed, err := v.Update(map[string]string{"a": "1", "c": "3"})
	require.NoError(t, err)
	assert.True(t, changed)
	second, _ := v.Generation()
	assert.NotEqual(t, first, second)
	_, err = os.Stat(filepath.Join(v.Dir, first))
	assert.ErrorIs(t, err, os.ErrNotExist, "the old generation is removed")
	_, err = os.Lstat(v.Path("b"))
	assert.ErrorIs(t, err, os.ErrNotExist, "a dropped key's link goes")
	b, err := os.ReadFile(v.Path("c"))
	require.NoError(t, err)
	assert.Equal(t, "3", string(b))
	payload, err := v.Payload()
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"a": "1", "c": "3"}, payload)

	changed, err = v.Update(map[string]string{"a": "1", "c": "3"})
	require.NoError(t, err)
	assert.False(t, changed, "an unchanged payload writes nothing")
	third, _ := v.Generation()
	assert.Equal(t, second, third)

	require.NoError(t, v.SwapRemoveCreate(map[string]string{"a": "4"}, time.Millisecond))
	b, err = os.ReadFile(v.Path("a"))
	require.NoError(t, err)
	assert.Equal(t, "4", string(b))
	_, err = os.Lstat(v.Path("c"))
	assert.ErrorIs(t, err, os.ErrNotExist)
}

// A volume made before, by New in another process say, is updated through
// a Volume that names its directory: the old generation goes, as New's
// own updates make it go.
func TestAVolumeThatExistsIsUpdatedByItsDirectory(t *testing.T) {
	made, err := New(filepath.Join(t.TempDir(), "cm"), map[string]string{"a": "1"})
	require.NoError(t, err)
	first, _ := made.Generation()

	v := &Volume{Dir: made.Dir}
	payload, err := v.Payload()
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"a": "1"}, payload)
	changed, err := v.Update(map[string]string{"a": "2"})
	require.NoError(t, err)
	assert.True(t, changed)
	b, err := os.ReadFile(v.Path("a"))
	require.NoError(t, err)
	assert.Equal(t, "2", string(b))
	_, err = os.Stat(filepath.Join(v.Dir, first))
	assert.ErrorIs(t, err, os.ErrNotExist, "the old generation is removed")
}

// Keys kubelet would refuse, or that are no top-level file name, are
// refused before anything is written.
func TestInvalidKeysAreRefused(t *testing.T) {
	v, err := New(filepath.Join(t.TempDir(), "cm"), map[string]string{"a": "1"})
	require.NoError(t, err)
	gen, _ := v.Generation()
	for _, key := range []string{"", ".", "..", "..data", "a/b", `a\b`} {
		_, err := v.Update(map[string]string{key: "x"})
		assert.ErrorIs(t, err, ErrInvalidKey, "%q", key)
		assert.ErrorIs(t, v.SwapRemoveCreate(map[string]string{key: "x"}, 0), ErrInvalidKey, "%q", key)
	}
	now, _ := v.Generation()
	assert.Equal(t, gen, now, "nothing written")
	entries, err := os.ReadDir(v.Dir)
	require.NoError(t, err)
	assert.Len(t, entries, 3, "..data, its generation, the key's link")
}
