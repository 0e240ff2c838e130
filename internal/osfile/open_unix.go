//go:build unix && !linux

package osfile

import (
	"os"
	"syscall"
)

// openToRead opens a file for reading without blocking on a named pipe
// with no writer (O_NONBLOCK), and without making a terminal device the
// controlling terminal (O_NOCTTY).
func openToRead(path string) (readable, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, err
	}
	return f, nil
}
