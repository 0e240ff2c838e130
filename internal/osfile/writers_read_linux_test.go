package osfile

import (
	"bytes"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/keepwatch/file/internal/decide"
)

// A read the kernel says no writer held the file through is of the file
// whole: asked before the read and let go at once, where the file's change
// times tell every change (the stamps taken at the open and after the read
// then tell a writer that began meanwhile), or held through the read
// elsewhere. A writer that finishes between the question and the end of
// the read must not make a half it left behind pass for the file's
// content. A writer rewrites the file in two halves, over and over, while
// it is read.
func TestAReadNoWriterHeldIsWhole(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	whole := bytes.Repeat([]byte("x"), 4096)
	require.NoError(t, os.WriteFile(path, whole, 0o644))
	if c, err := ReadFile(path, path, 1<<20, true); err != nil || c.Writers == decide.WritersUnknown {
		t.Skip("the kernel does not say who holds a file open for writing here")
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
			if err != nil {
				return
			}
			_, _ = f.Write(whole[:len(whole)/2])
			_, _ = f.Write(whole[len(whole)/2:])
			_ = f.Close()
		}
	}()
	var none, torn int
	for end := time.Now().Add(300 * time.Millisecond); time.Now().Before(end); {
		c, err := ReadFile(path, path, 1<<20, true)
		require.NoError(t, err)
		if c.Writers == decide.WritersNone {
			none++
			if !bytes.Equal(c.Data, whole) {
				torn++
			}
		}
	}
	stop.Store(true)
	wg.Wait()
	t.Logf("%d reads with no writer", none)
	assert.Zero(t, torn, "reads with no writer that were not whole, of %d", none)
}
