//go:build unix

package file

import (
	"os"
	"syscall"
)

// readlink returns the target of the symlink at path, as os.Readlink does,
// into a buffer on the stack: a kubelet volume's ..data is read on the way
// to every callback there, and os.Readlink's buffer was an allocation more
// each time. A target that fills the buffer is read again by os.Readlink.
func readlink(path string) (string, error) {
	var buf [256]byte
	for {
		n, err := syscall.Readlink(path, buf[:])
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			return "", &os.PathError{Op: "readlink", Path: path, Err: err}
		case n >= len(buf):
			return os.Readlink(path)
		}
		return string(buf[:n]), nil
	}
}
