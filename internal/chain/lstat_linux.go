package chain

import (
	"errors"
	"io/fs"
	"syscall"
	"time"
)

// lstatWay is what a lookup on the way to the file needs of a name: is it
// a symlink or a directory, and, for a symlink, when it was made. Unlike
// os.Lstat it makes no FileInfo, which a resolution keeps only for the
// file it leads to: a kubelet update's ..data and payload directory cost
// none on the way to the callback.
func lstatWay(path string) (fs.FileMode, time.Time, error) {
	var st syscall.Stat_t
	for {
		err := syscall.Lstat(path, &st)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return 0, time.Time{}, &fs.PathError{Op: "lstat", Path: path, Err: err}
		}
		break
	}
	var mode fs.FileMode
	switch st.Mode & syscall.S_IFMT {
	case syscall.S_IFLNK:
		mode = fs.ModeSymlink
	case syscall.S_IFDIR:
		mode = fs.ModeDir
	case syscall.S_IFREG:
	default:
		mode = fs.ModeIrregular
	}
	return mode, time.Unix(st.Mtim.Unix()), nil
}

// readlink reads the symlink at path into buf, which it grows as needed
// and keeps for the next call, and returns its target.
func readlink(path string, buf *[]byte) (string, error) {
	if len(*buf) == 0 {
		*buf = make([]byte, 256)
	}
	for {
		n, err := syscall.Readlink(path, *buf)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return "", &fs.PathError{Op: "readlink", Path: path, Err: err}
		}
		if n < len(*buf) {
			return string((*buf)[:n]), nil
		}
		*buf = make([]byte, 2*len(*buf))
	}
}
