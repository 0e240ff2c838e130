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
