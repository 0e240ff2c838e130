package file

import (
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A read overtaken by swaps, its payload removed each time once ..data
// names the next, is made again from the newest, up to maxGenerationReads
// reads in all.
func TestAReadOvertakenBySwapsFollowsThePayloadDataNames(t *testing.T) {
	for _, c := range []struct {
		name      string
		overtaken int // reads that find their payload gone
		wantErr   bool
	}{
		{"never", 0, false},
		{"once, as under kubelet", 1, false},
		{"by a writer that swaps back to back", 50, false},
		{"by one that never stops", maxGenerationReads, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			link := filepath.Join(t.TempDir(), dataLink)
			require.NoError(t, os.Symlink("..0", link))
			var read []string
			r := readGeneration(link, "..0", func(gen string) reading {
				read = append(read, gen)
				if len(read) > c.overtaken {
					return reading{c: content{gen: gen}}
				}
				require.NoError(t, os.Remove(link))
				require.NoError(t, os.Symlink(".."+strconv.Itoa(len(read)), link))
				return reading{err: &fs.PathError{Op: "open", Path: gen, Err: fs.ErrNotExist}}
			})
			if c.wantErr {
				assert.ErrorIs(t, r.err, fs.ErrNotExist)
				assert.Len(t, read, maxGenerationReads)
				return
			}
			require.NoError(t, r.err)
			assert.Len(t, read, c.overtaken+1)
			assert.Equal(t, read[len(read)-1], r.c.gen, "the newest payload's")
		})
	}
}
