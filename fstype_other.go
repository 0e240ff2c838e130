//go:build !linux

package file

// fsType is only known on Linux.
func fsType(string) (name string, noEvents bool) { return "", false }
