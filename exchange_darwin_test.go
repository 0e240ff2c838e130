package file

import "golang.org/x/sys/unix"

// exchange swaps the names old and new at once, as some deploy tools swap
// a release directory: renamex_np(2) with RENAME_SWAP.
func exchange(old, new string) error {
	return unix.RenamexNp(old, new, unix.RENAME_SWAP)
}
