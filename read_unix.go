//go:build unix

package file

import (
	"io/fs"
	"os"
	"syscall"
)

// openToRead opens a file for reading without blocking on a named pipe
// with no writer (O_NONBLOCK), and without making a terminal device the
// controlling terminal (O_NOCTTY).
func openToRead(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
}

// fileID returns what tells one file from another: its device and inode.
func fileID(info fs.FileInfo) (dev, ino uint64) {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Dev), st.Ino
	}
	return 0, 0
}

// linkCount returns how many names the file has.
func linkCount(info fs.FileInfo) uint64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}

// platformProcessError reports the process's own read failures that
// processError does not know: none on Unix.
func platformProcessError(error) bool { return false }
