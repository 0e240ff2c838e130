package glob

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMembersAreTheMatchingFilesInLexicalOrder(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"b.yaml", "a.yaml", ".hidden.yaml", "notes.txt"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, f), nil, 0o644))
	}
	require.NoError(t, os.Mkdir(filepath.Join(dir, "old.yaml"), 0o755))
	require.NoError(t, os.Symlink("old.yaml", filepath.Join(dir, "dirlink.yaml")))
	require.NoError(t, os.Symlink("a.yaml", filepath.Join(dir, "c.yaml")))
	require.NoError(t, os.Symlink("gone.yaml", filepath.Join(dir, "d.yaml")))

	names, err := Members(dir, "*.yaml")
	require.NoError(t, err)
	assert.Equal(t, []string{"a.yaml", "b.yaml", "c.yaml", "d.yaml"}, names)

	_, err = Members(dir, "[")
	assert.ErrorIs(t, err, filepath.ErrBadPattern)
	_, err = Members(filepath.Join(dir, "missing"), "*")
	assert.ErrorIs(t, err, os.ErrNotExist)
}

func TestTreeIsEveryFileBelowButKubeletsOwn(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"b", "a.yaml", ".dockerconfigjson", "g/h", "g/i/j", "..2026_01_01/k"} {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, filepath.Dir(f)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, f), nil, 0o644))
	}
	require.NoError(t, os.Symlink("..2026_01_01", filepath.Join(dir, "..data")))
	require.NoError(t, os.Symlink("..data/k", filepath.Join(dir, "k")))
	require.NoError(t, os.Symlink("g", filepath.Join(dir, "dirlink")))
	require.NoError(t, os.Symlink("gone", filepath.Join(dir, "dangling")))
	outside := filepath.Join(t.TempDir(), "secret")
	require.NoError(t, os.WriteFile(outside, nil, 0o600))
	require.NoError(t, os.Symlink(outside, filepath.Join(dir, "escape")))
	require.NoError(t, os.Symlink("../b", filepath.Join(dir, "g", "up"))) // out of g, not of dir

	names, err := Tree(dir)
	require.NoError(t, err)
	assert.Equal(t, []string{".dockerconfigjson", "a.yaml", "b", "g/h", "g/i/j", "g/up", "k"}, names)

	_, err = Tree(filepath.Join(dir, "missing"))
	assert.ErrorIs(t, err, os.ErrNotExist)
}
