package osfile

import (
	"errors"
	"io/fs"
)

// The errors a read reports, in an *fs.PathError naming the path the user
// gave. The root package exports them as file.ErrNotRegularFile and
// file.ErrFileTooLarge: the same values, so that errors.Is holds with
// either name.
var (
	// ErrNotRegular means the path leads to a directory, a named pipe, a
	// device, a socket or anything else that is not a regular file. It is
	// never read.
	ErrNotRegular = errors.New("keepwatch: not a regular file")

	// ErrTooLarge means the file is larger than the read's limit.
	ErrTooLarge = errors.New("keepwatch: file too large")
)

// NotRegularError says what the path is instead of a regular file; it
// matches ErrNotRegular.
type NotRegularError struct{ Mode fs.FileMode }

func (e *NotRegularError) Error() string {
	return ErrNotRegular.Error() + ": " + describeMode(e.Mode)
}

func (e *NotRegularError) Unwrap() error { return ErrNotRegular }

func describeMode(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "directory"
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeCharDevice != 0:
		return "character device"
	case m&fs.ModeDevice != 0:
		return "block device"
	default:
		return "irregular file (" + m.Type().String() + ")"
	}
}
