package osfile

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"os"

	"github.com/keepwatch/file/internal/decide"
)

// readable is an open file to read: an *os.File, or on Linux a bare
// descriptor (see openToRead).
type readable interface {
	io.ReadCloser
	Stat() (fs.FileInfo, error)
}

// Result is what ReadFile found: the file's bytes and their hash, its
// fstat, whether it was cut short as it was read, and what the read
// learned of its writers.
type Result struct {
	Data    []byte
	Sum     [sha256.Size]byte
	Info    fs.FileInfo    // the fstat of the file opened
	Torn    bool           // cut short as it was read: a writer is at work
	Writers decide.Writers // whether anyone held it open for writing as it was read, if the kernel was asked and said
	Stamp   decide.Stamp   // the file's stamp once it was read (StampOf)
	Fine    bool           // the filesystem gives every change a change time of its own
}

// ReadFile reads the regular file at abs, reporting errors against name (the
// path the user gave). It opens without blocking and checks the open file
// before reading a byte, so a named pipe cannot hang it and a device cannot
// feed it forever; it never reads more than limit+1 bytes, so a file that
// grows while being read cannot exhaust memory.
//
// It stamps the file (StampOf) as it opened it and once it has read it.
// With ask, it asks the kernel before the read whether anyone holds the
// file open for writing (askWriters): where no one does and the stamps
// are alike, on a filesystem whose change times tell every change (fine),
// no writer was at work on what was read. Without, the decider judges the
// writers by what the file's own watch told of them, and by the stamps.
func ReadFile(abs, name string, limit int64, ask bool) (Result, error) {
	fd, err := openToRead(abs)
	if err != nil {
		return Result{}, WithPath(err, name)
	}
	defer fd.Close()
	info, err := fd.Stat()
	if err != nil {
		return Result{}, WithPath(err, name)
	}
	if !info.Mode().IsRegular() {
		return Result{}, &fs.PathError{Op: "read", Path: name, Err: &NotRegularError{info.Mode()}}
	}
	if info.Size() > limit {
		return Result{}, TooLarge(name, info.Size(), limit)
	}
	w := askWriters(fd, ask)
	data, err := readAtMost(fd, info.Size(), limit)
	after, aerr := fd.Stat() // only compared with info: see rawFile.Stat
	if w.held {
		releaseWriters(fd)
	}
	if err != nil {
		return Result{}, WithPath(err, name)
	}
	if int64(len(data)) > limit {
		return Result{}, TooLarge(name, int64(len(data)), limit)
	}
	if aerr != nil {
		after = info
	}
	stamp := StampOf(after)
	if w.answer == decide.WritersNone && w.fine && stamp != StampOf(info) {
		// No one held the file when asked, and someone changed it as it
		// was read: a writer that opened it since is at work.
		w.answer = decide.WritersOpen
	}
	torn := cutShort(info.Size(), after.Size(), int64(len(data)), func() bool { return sizesTold(fd) })
	return Result{Data: data, Sum: sha256.Sum256(data), Info: info, Torn: torn,
		Writers: w.answer, Stamp: stamp, Fine: w.fine}, nil
}

// cutShort reports whether a read of n bytes, of a file whose fstat said
// size before it and after once it was read, was cut short by a writer's
// truncation: it read fewer bytes than the file had, or the file had fewer
// bytes once read than the read found (the new content of a file found
// empty came, and a truncation took it away again, as it was read: the
// kernel grants a lease between the two, and on ext4 a change within one
// tick of its clock may leave the stamps as they were, so neither tells).
// A file whose filesystem does not give its size (sizes, asked only then:
// proc, sysfs) reports 0 whatever it holds, and is never cut short so.
func cutShort(before, after, n int64, sizes func() bool) bool {
	return before > 0 && n < before || after < n && sizes()
}

// readAtMost reads r to its end, or until it has read limit+1 bytes, which
// is enough to tell the file is too large. size is the size fstat gave: a
// file that has one is read that far, with no read to find its end (a
// system call less on the path to the callback; a file that grows
// meanwhile has a writer at work, whose write its event tells of). Files
// in /proc report 0 and are read to their end.
func readAtMost(r io.Reader, size, limit int64) ([]byte, error) {
	if size > 0 && size <= limit {
		data := make([]byte, size)
		n, err := io.ReadFull(r, data)
		if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
			return nil, err
		}
		return data[:n], nil
	}
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

// StampOf sums up what a change to a file changes of its stat: its
// identity, size, and modification and change times. Two stamps alike, the
// second taken after the first, on a filesystem that gives every change
// made after a stat a change time of its own, say that nothing changed the
// file between them.
func StampOf(info fs.FileInfo) decide.Stamp {
	h := fnv.New64a()
	var b [8]byte
	put := func(v uint64) {
		binary.LittleEndian.PutUint64(b[:], v)
		h.Write(b[:])
	}
	dev, ino := ID(info)
	put(dev)
	put(ino)
	put(uint64(info.Size()))
	put(uint64(info.ModTime().UnixNano()))
	put(uint64(changeTime(info)))
	return decide.Stamp(h.Sum64() | 1) // never zero: zero means no stamp
}

// SameFile reports whether two stats are of one file: by device and inode
// where the platform gives them (a read's stat on Linux is not os's own,
// which os.SameFile needs), as os.SameFile judges elsewhere. No stat is of
// no file.
func SameFile(a, b fs.FileInfo) bool {
	if a == nil || b == nil {
		return false
	}
	da, ia := ID(a)
	db, ib := ID(b)
	if ia != 0 && ib != 0 {
		return da == db && ia == ib
	}
	return os.SameFile(a, b)
}

// TooLarge is the error of a read of name that found size bytes, over
// limit: an *fs.PathError that matches ErrTooLarge.
func TooLarge(name string, size, limit int64) error {
	return &fs.PathError{Op: "read", Path: name,
		Err: fmt.Errorf("%w: more than %d bytes (at least %d)", ErrTooLarge, limit, size)}
}

// WithPath makes a path error name the user's path rather than the
// absolute one that was opened, as koanf's stock provider does.
func WithPath(err error, name string) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return &fs.PathError{Op: pe.Op, Path: name, Err: pe.Err}
	}
	return &fs.PathError{Op: "read", Path: name, Err: err}
}
