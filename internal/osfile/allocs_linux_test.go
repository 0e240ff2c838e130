package osfile

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A read is on the path to every callback: besides the bytes read, it
// allocates the path as the kernel takes it and the descriptor's handle,
// and no FileInfo (the handle holds its two fstats: 5 allocations before).
// Counted, not timed: a count does not vary with the load.
func TestAReadAllocatesLittleBesidesItsBytes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(path, []byte("a: 1\n"), 0o644))
	for _, ask := range []bool{false, true} {
		allocs := testing.AllocsPerRun(100, func() {
			_, err := ReadFile(path, path, 1<<20, ask)
			require.NoError(t, err)
		})
		t.Logf("ask %v: %v allocations a read", ask, allocs)
		assert.LessOrEqual(t, allocs, 3.0, "ask %v", ask)
	}
}
