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
