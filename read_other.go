//go:build !unix

package file

// openFlags: elsewhere an open does not block on what is not a file.
const openFlags = 0
