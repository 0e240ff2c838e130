package decide

import (
	"io/fs"
	"slices"
)

// Resolution is what one resolution of the watched path found it depends
// on: the paths whose events matter, and what to watch. The loop makes it
// and hands it in with [Decider.Resolved]; its maps and slices are the
// loop's, read here until the next one comes.
type Resolution struct {
	Names map[string]bool // every path looked up: an event naming one matters
	// InEntries reports whether a path is one of a directory's entries that
	// all matter as they come and go (a glob's, a tree's); nil if none.
	InEntries  func(path string) bool
	Dirs       []string    // the directories the resolution depends on: always watched
	Searched   []string    // every directory a name was looked up in, Dirs among them
	Files      []string    // the files read, whose own inode is watched where it can be
	Home       string      // where the subject lives: the directory of its file, or the set's
	HomeParent string      // the directory above Home, watched in its stead where Home refuses a watch
	DataLink   string      // the ..data link of a kubelet volume the subject is read through; "" if none
	Atomic     bool        // whole updates arrive at once (one file, or a kubelet swap): no need to wait for a set to settle
	One        bool        // the resolution of one file, not of a set
	File       fs.FileInfo // the file it led to, for one file: what a read right after it should find
}

// relevant reports whether an event on name can change what the subject
// resolves to or what it holds.
func (r *Resolution) relevant(name string) bool {
	return r.Names[name] || slices.Contains(r.Dirs, name) || slices.Contains(r.Files, name) ||
		(r.InEntries != nil && r.InEntries(name))
}

// onTheWay reports whether path is a name the resolution looked up on the
// way to the file, not the file itself.
func (r *Resolution) onTheWay(path string) bool {
	return r.Names[path] && !slices.Contains(r.Files, path)
}

// isFile reports whether path is one of the files the resolution led to.
func (r *Resolution) isFile(path string) bool { return slices.Contains(r.Files, path) }
