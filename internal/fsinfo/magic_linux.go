package fsinfo

import (
	"sync"

	"golang.org/x/sys/unix"
)

// maxMounts bounds the magic numbers kept: a process that reads through
// more mounts than that asks the kernel again for those it forgot.
const maxMounts = 1024

// mounts keeps the statfs magic number of each mount read through, by its
// unique ID.
var mounts struct {
	sync.Mutex
	magic map[uint64]int64
}

// statfsCalls counts the fstatfs calls Magic made, under mounts' lock.
var statfsCalls int

// StatfsCalls is how many times Magic has asked the kernel so far. It is
// for the tests.
func StatfsCalls() int {
	mounts.Lock()
	defer mounts.Unlock()
	return statfsCalls
}

// Magic returns the statfs magic number of the filesystem holding the open
// descriptor fd. mount is the unique ID of the mount fd was opened through
// (statx's STATX_MNT_ID_UNIQUE, Linux 6.8 and later), or 0 if it is not
// known. A mount's filesystem never changes, and its unique ID is never
// given to another mount, unlike its device number or its plain mount ID,
// which a mount made after an unmount may take: the kernel is asked once
// per mount, and a read through it costs no fstatfs after that.
func Magic(fd int, mount uint64) (int64, error) {
	if mount != 0 {
		mounts.Lock()
		m, ok := mounts.magic[mount]
		mounts.Unlock()
		if ok {
			return m, nil
		}
	}
	var st unix.Statfs_t
	if err := unix.Fstatfs(fd, &st); err != nil {
		return 0, err
	}
	mounts.Lock()
	defer mounts.Unlock()
	statfsCalls++
	if mount != 0 {
		if mounts.magic == nil || len(mounts.magic) >= maxMounts {
			mounts.magic = make(map[uint64]int64)
		}
		mounts.magic[mount] = int64(st.Type)
	}
	return int64(st.Type), nil
}
