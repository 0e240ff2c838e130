//go:build !unix

package file

const openFlags = 0
