package osfile

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReadFileStopsAtTheLimitOnAnEndlessFile(t *testing.T) {
	// /proc files report size 0 and are read anyway; an endless one must
	// stop at the limit rather than exhaust memory.
	b, err := readAtMost(endless{}, 0, 1<<20)
	require.NoError(t, err)
	assert.Len(t, b, 1<<20+1)
}

type endless struct{}

func (endless) Read(p []byte) (int, error) { return len(p), nil }

// A read is cut short where it read fewer bytes than the file had when
// opened, or the file had fewer once read than the read found. The second
// is what a kernel race looks like (found under TestConvergence): a file
// found empty got its content and lost it to the next writer's O_TRUNC as
// it was read, a lease granted between the two, its stamps unchanged.
func TestCutShort(t *testing.T) {
	sizes := func() bool { return true }
	noSizes := func() bool { return false }
	for _, c := range []struct {
		name             string
		before, after, n int64
		sizes            func() bool
		want             bool
	}{
		{"read whole", 1156, 1156, 1156, sizes, false},
		{"an empty file read empty", 0, 0, 0, sizes, false},
		{"fewer bytes than opened with: truncated as it was read", 1156, 0, 512, sizes, true},
		{"found empty, 512 bytes read, empty again once read", 0, 0, 512, sizes, true},
		{"whole, then truncated before the second stat", 1156, 0, 1156, sizes, true},
		{"grown as it was read: its writer's write tells", 0, 2048, 512, sizes, false},
		{"a proc file: size 0 whatever it holds", 0, 0, 512, noSizes, false},
	} {
		assert.Equal(t, c.want, cutShort(c.before, c.after, c.n, c.sizes), c.name)
	}
}

// A file of /proc reports size 0 and is read whole, never cut short.
func TestAProcFileIsNotCutShort(t *testing.T) {
	r, err := ReadFile("/proc/self/status", "status", 1<<20, false)
	if err != nil {
		t.Skip("no /proc here")
	}
	assert.NotEmpty(t, r.Data)
	assert.Zero(t, r.Info.Size())
	assert.False(t, r.Torn)
}
