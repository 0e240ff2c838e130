package file

import (
	"crypto/sha256"
	"io/fs"
	"time"
)

// content is one read of a file, or of a set of files.
type content struct {
	data    []byte            // the file's content; nil for a set
	files   []member          // the set's files, in the order they merge; nil for a file
	gen     string            // the kubelet payload it was read from, "" if none
	vol     string            // the kubelet volume it was read through, the directory holding ..data; "" if none
	swapped time.Time         // when that volume's ..data was made to point to gen, if known
	sum     [sha256.Size]byte // of all of it
	sig     signature         // the stat it was read at, for the cheap re-check
	info    fs.FileInfo       // a file's fstat
	mtime   time.Time         // the file's modification time; a set's newest
	torn    bool              // a file cut short as it was read: a writer is at work
}

// member is one file of a set, as read.
type member struct {
	name string // its name in the set's directory
	data []byte
}

// size is how many bytes were read.
func (c *content) size() int {
	n := len(c.data)
	for _, m := range c.files {
		n += len(m.data)
	}
	return n
}

// names lists the files of a set's content.
func (c *content) names() []string {
	var out []string
	for _, m := range c.files {
		out = append(out, m.name)
	}
	return out
}

// reading is one read of the subject: its content or why it could not be
// read, and why it was read.
type reading struct {
	why Reason
	c   content
	err error
}

// writtenWithin reports whether c was written so lately, at now, that a
// writer may still be at it: within the last d and, in a kubelet volume,
// after its payload was swapped in (kubelet writes a payload whole, then
// swaps it in; a write after that is someone editing it in place). A file
// found complete, its writer long gone, as a symlink retargeted to a
// release deployed before, is read at once; so is one edited in place
// long ago, which a wait would find no older each time it ends.
func (c *content) writtenWithin(d time.Duration, f facts, now time.Time) bool {
	if age := now.Sub(c.mtime); age >= d || age <= -d {
		return false
	}
	if c.vol != "" {
		swapped := c.swapped
		if swapped.IsZero() {
			var ok bool
			if swapped, ok = f.swapped(c.vol); !ok {
				return false
			}
		}
		return c.mtime.After(swapped)
	}
	return true
}

// gone reports whether the path (paths, a subject's) no longer shows the
// file r read, by the facts f. A set's read is taken to be there.
func (r *reading) gone(paths []string, f facts) bool {
	cur, one := fileNow(paths, f)
	if r.c.info == nil || !one {
		return false
	}
	return cur == nil || !sameFile(cur, r.c.info)
}
