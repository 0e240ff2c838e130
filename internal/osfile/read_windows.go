package osfile

import (
	"io/fs"
	"os"
	"syscall"
)

// openToRead opens a file for reading, sharing it for delete as well as
// for reading and writing, which os.Open does not: Windows refuses to
// delete or rename a file that someone opened without delete sharing, and
// a watch's read must not make a writer (an editor saving, a deploy tool)
// fail. Directories open too (FILE_FLAG_BACKUP_SEMANTICS), to be refused
// by their mode like everything else that is not a regular file.
func openToRead(path string) (readable, error) {
	p, err := syscall.UTF16PtrFromString(path)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	const share = syscall.FILE_SHARE_READ | syscall.FILE_SHARE_WRITE | syscall.FILE_SHARE_DELETE
	h, err := syscall.CreateFile(p, syscall.GENERIC_READ, share, nil, syscall.OPEN_EXISTING,
		syscall.FILE_ATTRIBUTE_NORMAL|syscall.FILE_FLAG_BACKUP_SEMANTICS, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(h), path), nil
}

// ID returns what tells one file from another; on Windows, nothing the
// FileInfo carries: size and modification time have to do.
func ID(fs.FileInfo) (dev, ino uint64) { return 0, 0 }

// LinkCount returns how many names the file has; here, as far as the
// FileInfo tells, one.
func LinkCount(fs.FileInfo) uint64 { return 1 }
