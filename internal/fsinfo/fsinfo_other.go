//go:build !linux

package fsinfo

// Type is only known on Linux.
func Type(string) (name string, noEvents bool) { return "", false }
