//go:build unix

package file

import (
	"io/fs"
	"syscall"
)

// openFlags keep an open from blocking on a named pipe with no writer and
// from making a terminal device the controlling terminal.
const openFlags = syscall.O_NONBLOCK | syscall.O_NOCTTY

// fileID returns what tells one file from another: its device and inode.
func fileID(info fs.FileInfo) (dev, ino uint64) {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Dev), st.Ino
	}
	return 0, 0
}
