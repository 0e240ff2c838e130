package file

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"time"
)

// content is one read of a file, or of a set of files.
type content struct {
	data  []byte            // the file's content; nil for a set
	files []member          // the set's files, in the order they merge; nil for a file
	gen   string            // the kubelet payload it was read from, "" if none
	sum   [sha256.Size]byte // of all of it
	sig   signature         // the stat it was read at, for the cheap re-check
	info  fs.FileInfo       // a file's fstat
	mtime time.Time         // the file's modification time; a set's newest
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

// reason says why the file was read. It goes to the logger with each
// delivery, and to Stats.
type reason string

const (
	reasonStart   reason = "start"   // the watch began
	reasonRestart reason = "restart" // the watch was re-armed after a failure
	reasonEvent   reason = "event"   // a filesystem event on the path's chain
	reasonWrite   reason = "write"   // in-place writes went quiet
	reasonRecheck reason = "recheck" // the periodic re-check saw a change
	reasonRequest reason = "request" // the application asked, with Recheck
)

// reading is one read of the file: its content or why it could not be
// read, and why it was read.
type reading struct {
	why reason
	c   content
	err error
}

// target is what a watch watches and how: the subject, the name it goes
// by, and the options.
type target struct {
	path string // names the subject in events, logs and Stats
	subj subject
	opts *options
}

// readFile reads the regular file at abs, reporting errors against name (the
// path the user gave). It opens without blocking and checks the open file
// before reading a byte, so a named pipe cannot hang it and a device cannot
// feed it forever; it never reads more than limit+1 bytes, so a file that
// grows while being read cannot exhaust memory.
func readFile(abs, name string, limit int64) (content, error) {
	fd, err := openToRead(abs)
	if err != nil {
		return content{}, renamePath(err, name)
	}
	defer fd.Close()

	info, err := fd.Stat()
	if err != nil {
		return content{}, renamePath(err, name)
	}
	if !info.Mode().IsRegular() {
		return content{}, &fs.PathError{Op: "read", Path: name, Err: &notRegularError{info.Mode()}}
	}
	if info.Size() > limit {
		return content{}, tooLarge(name, info.Size(), limit)
	}
	data, err := readAtMost(fd, info.Size(), limit)
	if err != nil {
		return content{}, renamePath(err, name)
	}
	if int64(len(data)) > limit {
		return content{}, tooLarge(name, int64(len(data)), limit)
	}
	return content{data: data, sum: sha256.Sum256(data), info: info, mtime: info.ModTime()}, nil
}

// readAtMost reads r to its end, or until it has read limit+1 bytes, which
// is enough to tell the file is too large. size is the expected size; files
// in /proc report 0 and are read anyway.
func readAtMost(r io.Reader, size, limit int64) ([]byte, error) {
	data := make([]byte, 0, min(size, limit)+512)
	for int64(len(data)) <= limit {
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
		end := min(int64(cap(data)), limit+1)
		n, err := r.Read(data[len(data):end])
		data = data[:len(data)+n]
		if errors.Is(err, io.EOF) {
			return data, nil
		}
		if err != nil {
			return nil, err
		}
	}
	return data, nil
}

func tooLarge(name string, size, limit int64) error {
	return &fs.PathError{Op: "read", Path: name,
		Err: fmt.Errorf("%w: more than %d bytes (at least %d)", ErrFileTooLarge, limit, size)}
}

// renamePath makes a path error name the user's path rather than the
// absolute one that was opened, as koanf's stock provider does.
func renamePath(err error, name string) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return &fs.PathError{Op: pe.Op, Path: name, Err: pe.Err}
	}
	return &fs.PathError{Op: "read", Path: name, Err: err}
}
