package fsinfo

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestTypeKnowsTheMachinesFilesystems(t *testing.T) {
	if _, err := os.Stat("/proc/self"); err != nil {
		t.Skip("no /proc")
	}
	name, none := Type("/proc/self")
	assert.Equal(t, "proc", name)
	assert.True(t, none, "/proc changes without events")
	name, none = Type(t.TempDir())
	assert.NotEmpty(t, name)
	assert.False(t, none)
}

func TestKernelVersion(t *testing.T) {
	for release, want := range map[string][2]int{
		"6.18.44-fc-v595": {6, 18}, "6.13": {6, 13}, "5.15.0-91-generic": {5, 15}, "10.1.2": {10, 1}, "": {0, 0}, "x": {0, 0},
	} {
		major, minor := kernelVersion(release)
		assert.Equal(t, want, [2]int{major, minor}, release)
	}
}
