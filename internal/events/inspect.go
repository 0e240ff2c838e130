package events

import (
	"path/filepath"

	"github.com/keepwatch/file/internal/decide"
)

// What the root package's tests look up about a hub: nothing in keepwatch
// itself calls it. inspect_linux.go has the kernel's side.

// Hears reports whether a subscription of the hub wants the events of
// path, and a watch of the hub's is of dir, the inode of path's directory
// now, so that a writer of the file there is heard from its first write
// on. A watch the hub still counts may be of a directory deleted since,
// whose drop the backend has yet to hand on: the backend says which inode
// each watch is of. Where it cannot tell (fsnotify), nothing is heard for
// sure. It is for the tests.
func (h *Hub) Hears(path string, dir decide.WatchedInode) bool {
	parent := filepath.Dir(path)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.names[path] == nil || h.cur == nil {
		return false
	}
	for id, w := range h.watches {
		if len(w.paths[parent]) == 0 {
			continue
		}
		if of, ok := h.cur.b.Inode(id); ok && !of.Gone && of.Dev == dir.Dev && of.Ino == dir.Ino {
			return true
		}
	}
	return false
}

// Overflows is how many times the hub's backends said events were lost
// (the kernel's queue overflowed, or fsnotify's), since the hub was made.
// It is for the tests, which make sure a flood through the hub loses none.
func (h *Hub) Overflows() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.overflows
}
