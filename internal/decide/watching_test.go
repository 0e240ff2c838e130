package decide

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The check after a read's adds looks up again only what no watch could
// tell of while they were added: names in a directory just watched, a path
// whose directory's entries were not watched before, and the file just
// watched by itself.
func TestTheCheckAfterAddsStartsWhereNoWatchCouldTell(t *testing.T) {
	const (
		vol     = "/etc/app"
		data    = vol + "/..data"
		payload = vol + "/..2026_01_01"
		file    = payload + "/config.yaml"
		link    = vol + "/config.yaml"
	)
	kubelet := Resolution{Names: map[string]bool{"/etc": true, vol: true, link: true, data: true, payload: true, file: true},
		Dirs: []string{vol, payload}, Searched: []string{"/", "/etc", vol, payload}, Files: []string{file}, One: true, Atomic: true}
	plain := resolution(readFile)
	set := func(m ...string) map[string]bool {
		s := make(map[string]bool)
		for _, p := range m {
			s[p] = true
		}
		return s
	}
	for _, c := range []struct {
		name    string
		res     Resolution
		watched map[string]WatchKind // before the adds
		added   map[string]bool
		want    map[string]bool
	}{
		{"a kubelet update: the payload is an entry of the volume, watched all along; its file is not",
			kubelet, map[string]WatchKind{vol: watchDir, "/etc": watchAncestor},
			set(payload, file), set(file)},
		{"the file's own watch again, after a rename over it", plain, map[string]WatchKind{dir: watchDir},
			set(path), set(path)},
		{"a directory whose parent's entries were not watched: from the directory",
			plain, map[string]WatchKind{"/etc": watchAncestor},
			set(dir), set(dir, path)},
		{"a directory on the way and its file, both new: from the directory", plain, map[string]WatchKind{},
			set(dir, path), set(dir, path)},
		{"an ancestor just watched, its parent's entries watched before but not depended on now: from the ancestor",
			plain, map[string]WatchKind{"/": watchDir}, set("/etc"), set("/etc", dir)},
		{"a directory made where the path was missing, its parent's entries watched by the last resolution only (fsnotify, no ancestors): from the directory",
			plain, map[string]WatchKind{"/etc": watchDirFiles}, set(dir), set(dir, path)},
		{"a directory just watched whose parent's entries were watched, nothing looked up in it: as added",
			plain, map[string]WatchKind{"/etc": watchDir}, set("/etc/other"), set("/etc/other")},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := New(config(linux))
			d.res = c.res
			for p, k := range c.watched {
				d.watches.watched[p] = k
			}
			for p := range c.added {
				d.watches.watched[p] |= watchDir
			}
			assert.Equal(t, c.want, d.checkFrom(c.added))
		})
	}
}

// A watch the kernel gives anew for a path already watched is of another
// inode there (a directory made again, its old watch's end not taken yet):
// it reports what it was asked for alone. Taken for the old watch's, a
// directory's closes were counted on that the new one was never asked for:
// a file created empty there, its creator's close unheard, waited ten
// seconds (the non-owner soak: 1 sequence in 1,215 did not converge).
func TestAWatchGivenAnewReportsWhatItWasAskedFor(t *testing.T) {
	w := newWatchSet(linux, fakeStats{})
	r := resolution(readFile)
	_, err := w.added(&r, planned{dir, watchDir | WatchCloses}, AddResult{ID: 1})
	require.NoError(t, err)
	_, err = w.added(&r, planned{dir, watchDir}, AddResult{ID: 1})
	require.NoError(t, err)
	assert.True(t, w.closesOf(path), "the same watch, asked for more: it keeps what it reported")
	_, err = w.added(&r, planned{dir, watchDir}, AddResult{ID: 7})
	require.NoError(t, err)
	assert.False(t, w.closesOf(path), "another watch: it reports its entries' names alone")
	assert.Equal(t, watchDir, w.watched[dir])
}
