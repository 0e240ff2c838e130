package file

import (
	"io/fs"
	"time"

	"golang.org/x/sys/unix"
)

// birthOf returns when the file at path (not following a final symlink)
// was made, if the filesystem records it and path still shows the file
// info describes: a file given an inode number just freed has the number,
// not the birth, of the file that had it.
func birthOf(path string, info fs.FileInfo) (time.Time, bool) {
	var stx unix.Statx_t
	if err := unix.Statx(unix.AT_FDCWD, path, unix.AT_SYMLINK_NOFOLLOW, unix.STATX_INO|unix.STATX_BTIME, &stx); err != nil {
		return time.Time{}, false
	}
	dev, ino := fileID(info)
	if stx.Mask&unix.STATX_BTIME == 0 || stx.Ino != ino || unix.Mkdev(stx.Dev_major, stx.Dev_minor) != dev {
		return time.Time{}, false
	}
	return time.Unix(stx.Btime.Sec, int64(stx.Btime.Nsec)), true
}
