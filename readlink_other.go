//go:build !unix

package file

import "os"

// readlink is os.Readlink (see readlink_unix.go).
func readlink(path string) (string, error) { return os.Readlink(path) }
