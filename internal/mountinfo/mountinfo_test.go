package mountinfo

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseAPodsMountTable(t *testing.T) {
	mounts, err := ReadFile("../../testdata/mountinfo-subpath")
	require.NoError(t, err)
	require.Len(t, mounts, 8)

	m, ok := At(mounts, "/etc/app/config.yaml")
	require.True(t, ok)
	assert.Equal(t, "ext4", m.FSType)
	assert.True(t, IsSubPath(m))
	assert.Equal(t, "", VolumeKind(m))

	m, ok = Containing(mounts, "/etc/flags/..data/flags.yaml")
	require.True(t, ok)
	assert.Equal(t, "/etc/flags", m.Point)
	assert.Equal(t, "configmap", VolumeKind(m))
	assert.False(t, IsSubPath(m))

	m, ok = Containing(mounts, "/etc/flagsx/a")
	require.True(t, ok)
	assert.Equal(t, "/", m.Point, "a sibling with a longer name is not a parent")

	m, ok = At(mounts, "/etc/my config")
	require.True(t, ok, "octal escapes are undone")
	assert.Equal(t, "/home/me/My Config", m.Root)

	_, ok = At(mounts, "/etc/app")
	assert.False(t, ok)
}

func TestParseSkipsWhatItCannotRead(t *testing.T) {
	mounts, err := Parse(strings.NewReader("garbage\n1 2 0:1 / /x rw - tmpfs tmpfs rw\n3 4 0:1 / /y rw shared:1\n"))
	require.NoError(t, err)
	require.Len(t, mounts, 1)
	assert.Equal(t, "/x", mounts[0].Point)
}
