//go:build !linux

package fsinfo

// Type is only known on Linux.
func Type(string) (name string, noEvents bool) { return "", false }

// FineTimes is only known on Linux: elsewhere a change may leave a file's
// times as they were.
func FineTimes(int64) bool { return false }

// FineTimesAt is FineTimes for an open descriptor.
func FineTimesAt(int, uint64) bool { return false }

// SizesAt says that the filesystem gives files their true size: proc
// and sysfs, whose files report 0, are Linux's.
func SizesAt(int, uint64) bool { return true }
