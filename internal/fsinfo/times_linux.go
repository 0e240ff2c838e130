package fsinfo

import (
	"sync"

	"golang.org/x/sys/unix"
)

// fineTimes lists the filesystems that stamp a change made after their
// times were last looked at with a change time of its own (multigrain
// timestamps, Linux 6.13 and later): ext4, xfs, btrfs and tmpfs.
// Elsewhere a change within a tick of the kernel's coarse clock (a few
// milliseconds) may leave the times as they were.
var fineTimes = map[uint32]bool{0xef53: true, 0x58465342: true, 0x9123683e: true, 0x01021994: true}

// FineTimes reports whether the filesystem whose statfs magic number is
// magic gives a file a new change time (ctime) at every change made after
// its stat was taken: two stats alike, the second after the first, say
// that nothing changed the file in between.
func FineTimes(magic int64) bool { return fineTimes[uint32(magic)] && multigrain() }

// FineTimesAt is FineTimes for the filesystem holding the open descriptor
// fd, opened through the mount whose unique ID is mount (0 if not known:
// see Magic).
func FineTimesAt(fd int, mount uint64) bool {
	magic, err := Magic(fd, mount)
	return err == nil && FineTimes(magic)
}

// multigrain reports whether the running kernel has multigrain
// timestamps: 6.13 or later.
var multigrain = sync.OnceValue(func() bool {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return false
	}
	major, minor := kernelVersion(unix.ByteSliceToString(u.Release[:]))
	return major > 6 || major == 6 && minor >= 13
})

// noSizes lists the filesystems whose files report a size of 0 whatever
// they hold (their content is made as it is read): proc, sysfs, debugfs,
// tracefs, securityfs, configfs, cgroup and cgroup2.
var noSizes = map[uint32]bool{0x9fa0: true, 0x62656572: true, 0x64626720: true, 0x74726163: true,
	0x73636673: true, 0x62656570: true, 0x27e0eb: true, 0x63677270: true}

// SizesAt reports whether the filesystem holding the open descriptor fd,
// opened through the mount whose unique ID is mount (0 if not known: see
// Magic), gives its files their true size, as a filesystem that stores
// them does: not proc's or sysfs's, whose files report 0. Unknown, it
// says they do.
func SizesAt(fd int, mount uint64) bool {
	magic, err := Magic(fd, mount)
	return err != nil || !noSizes[uint32(magic)]
}
