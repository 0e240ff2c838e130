//go:build !linux

package chain

import (
	"io/fs"
	"os"
	"time"
)

// lstatWay is what a lookup on the way to the file needs of a name: is it
// a symlink or a directory, and, for a symlink, when it was made.
func lstatWay(path string) (fs.FileMode, time.Time, error) {
	info, err := os.Lstat(path)
	if err != nil {
		return 0, time.Time{}, err
	}
	return info.Mode(), info.ModTime(), nil
}

// readlink reads the symlink at path.
func readlink(path string, _ *[]byte) (string, error) { return os.Readlink(path) }
