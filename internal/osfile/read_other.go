//go:build !unix && !windows

package osfile

import (
	"io/fs"
	"os"
)

// openToRead opens a file for reading; elsewhere an open does not block on
// what is not a file.
func openToRead(path string) (readable, error) {
	f, err := os.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// ID returns what tells one file from another; here, nothing: size and
// modification time have to do.
func ID(fs.FileInfo) (dev, ino uint64) { return 0, 0 }

// LinkCount returns how many names the file has; here, as far as the
// FileInfo tells, one.
func LinkCount(fs.FileInfo) uint64 { return 1 }
