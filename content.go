package file

import (
	"crypto/sha256"
	"io/fs"
	"time"

	"github.com/keepwatch/file/internal/decide"
	"github.com/keepwatch/file/internal/osfile"
)

// content is one read of a file, or of a set of files.
type content struct {
	data    []byte            // the file's content; nil for a set
	files   []member          // the set's files, in the order they merge; nil for a file
	gen     string            // the kubelet payload it was read from, "" if none
	vol     string            // the kubelet volume it was read through, the directory holding ..data; "" if none
	swapped time.Time         // when that volume's ..data was made to point to gen, if known
	sum     [sha256.Size]byte // of all of it
	sig     decide.Signature  // the stat it was read at, for the cheap re-check
	info    fs.FileInfo       // a file's fstat
	mtime   time.Time         // the file's modification time; a set's newest
	torn    bool              // a file cut short as it was read: a writer is at work
	writers decide.Writers    // whether anyone held it open for writing as it was read, if the kernel was asked and said
	stamp   decide.Stamp      // the file's stamp once it was read (osfile.StampOf); a set's, of all its files
	fine    bool              // the filesystem gives every change a change time of its own
}

// readFile reads the regular file at abs, reporting errors against name
// (the path the user gave), through osfile.ReadFile: within limit, and
// with ask, asking the kernel whether anyone holds it open for writing.
func readFile(abs, name string, limit int64, ask bool) (content, error) {
	r, err := osfile.ReadFile(abs, name, limit, ask)
	if err != nil {
		return content{}, err
	}
	return content{data: r.Data, sum: r.Sum, info: r.Info, mtime: r.Info.ModTime(), torn: r.Torn,
		writers: r.Writers, stamp: r.Stamp, fine: r.Fine}, nil
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
	why   decide.Reason
	c     content
	err   error
	first bool // made before the path was resolved again (decide's readsFirst)
}
