package file

import (
	"io/fs"
	"time"
)

// facts is what the judge may know of the disk and of the watches, as
// they are at one moment: the judge asks, and does no I/O itself. The
// shell answers from the disk (diskFacts); table tests answer from data.
//
// One set of facts answers for one batch of events: those queued when a
// read was made, say, all of which happened before the first stat taken
// for them. So each path is stat'ed at most once per batch, however many
// events ask (a rename-over's three events on the old file would otherwise
// cost five stats on the way to the callback).
type facts interface {
	// stat is the file path leads to now, following symlinks; nil if none.
	stat(path string) fs.FileInfo
	// lstat is path itself now, not following a symlink; nil if nothing.
	lstat(path string) fs.FileInfo
	// subject sums up the stat of everything the subject reads, as the
	// subject's stat does; zero if it cannot be stat'ed.
	subject() signature
	// swapped is when the ..data link of the kubelet volume vol was made,
	// if it can be told.
	swapped(vol string) (time.Time, bool)
	// watched reports whether the notifier watches path.
	watched(path string) bool
	// refused reports whether a watch on path was refused.
	refused(path string) bool
	// ownWatch is the id of the watch of the file at path by itself, if
	// there is one and it was added for the file info describes; zero
	// otherwise.
	ownWatch(path string, info fs.FileInfo) int
}
