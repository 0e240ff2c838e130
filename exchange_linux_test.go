package file

import "golang.org/x/sys/unix"

// exchange swaps the names old and new at once, as some deploy tools swap
// a release directory: renameat2(2) with RENAME_EXCHANGE.
func exchange(old, new string) error {
	return unix.Renameat2(unix.AT_FDCWD, old, unix.AT_FDCWD, new, unix.RENAME_EXCHANGE)
}
