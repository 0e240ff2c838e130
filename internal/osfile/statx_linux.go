package osfile

import (
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// noStatx says that statx(2) is not to be had: a kernel before 4.11, or a
// seccomp filter that refuses it. fstat stands in for it, with no mount ID.
var noStatx atomic.Bool

// emptyPath is the path statx is given with AT_EMPTY_PATH, to stat the
// descriptor itself: a string would be copied to the heap on every call.
var emptyPath = [1]byte{0}

// statxFd stats the descriptor fd into st, as fstat would, and returns the
// unique ID of the mount it was opened through (STATX_MNT_ID_UNIQUE, Linux
// 6.8 and later), 0 where the kernel does not give it. ok is false where
// statx is not to be had: the caller fstats instead.
func statxFd(fd int, st *syscall.Stat_t) (mount uint64, ok bool, err error) {
	if noStatx.Load() {
		return 0, false, nil
	}
	var stx unix.Statx_t
	for {
		_, _, e := unix.Syscall6(unix.SYS_STATX, uintptr(fd), uintptr(unsafe.Pointer(&emptyPath[0])),
			unix.AT_EMPTY_PATH, unix.STATX_BASIC_STATS|unix.STATX_MNT_ID_UNIQUE, uintptr(unsafe.Pointer(&stx)), 0)
		switch e {
		case 0:
		case unix.EINTR:
			continue
		case unix.ENOSYS, unix.EPERM:
			noStatx.Store(true)
			return 0, false, nil
		default:
			return 0, true, e
		}
		break
	}
	fromStatx(st, &stx)
	if stx.Mask&unix.STATX_MNT_ID_UNIQUE != 0 {
		mount = stx.Mnt_id
	}
	return mount, true, nil
}

// fromStatx fills st with what fstat would have put there, from stx.
// Stat_t's fields are of other sizes on other architectures: set converts.
func fromStatx(st *syscall.Stat_t, stx *unix.Statx_t) {
	*st = syscall.Stat_t{}
	set(&st.Dev, unix.Mkdev(stx.Dev_major, stx.Dev_minor))
	set(&st.Ino, stx.Ino)
	set(&st.Nlink, stx.Nlink)
	set(&st.Mode, stx.Mode)
	set(&st.Uid, stx.Uid)
	set(&st.Gid, stx.Gid)
	set(&st.Rdev, unix.Mkdev(stx.Rdev_major, stx.Rdev_minor))
	set(&st.Size, stx.Size)
	set(&st.Blksize, stx.Blksize)
	set(&st.Blocks, stx.Blocks)
	set(&st.Atim.Sec, stx.Atime.Sec)
	set(&st.Atim.Nsec, stx.Atime.Nsec)
	set(&st.Mtim.Sec, stx.Mtime.Sec)
	set(&st.Mtim.Nsec, stx.Mtime.Nsec)
	set(&st.Ctim.Sec, stx.Ctime.Sec)
	set(&st.Ctim.Nsec, stx.Ctime.Nsec)
}

type integer interface {
	~int16 | ~uint16 | ~int32 | ~uint32 | ~int64 | ~uint64
}

func set[T, V integer](dst *T, v V) { *dst = T(v) }
