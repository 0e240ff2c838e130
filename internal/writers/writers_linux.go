package writers

import (
	"golang.org/x/sys/unix"

	"github.com/keepwatch/file/internal/fsinfo"
)

// On asks of the file open read-only at fd. err says why the kernel does
// not say, when it does not: ErrElsewhere (a network or FUSE filesystem),
// EACCES (not the file's owner, and no CAP_LEASE), EINVAL (leases off, or
// none on the filesystem).
func On(fd int) (Answer, error) {
	var st unix.Statfs_t
	if err := unix.Fstatfs(fd, &st); err != nil {
		return Unknown, err
	}
	if _, elsewhere := fsinfo.Kind(int64(st.Type)); elsewhere {
		// The kernel would grant a FUSE file's lease whatever its daemon
		// writes, and refuse an NFS file's for want of a delegation: its
		// answer is about this host's writers only.
		return Unknown, ErrElsewhere
	}
	for {
		// Raw calls: the lease is held between the two, and writers'
		// opens wait for it, so the goroutine is not to be handed off to
		// the scheduler there, as a system call's entry and exit may.
		_, _, e := unix.RawSyscall(unix.SYS_FCNTL, uintptr(fd), unix.F_SETLEASE, unix.F_RDLCK)
		switch e {
		case 0:
			_, _, _ = unix.RawSyscall(unix.SYS_FCNTL, uintptr(fd), unix.F_SETLEASE, unix.F_UNLCK)
			return None, nil
		case unix.EAGAIN:
			return Open, nil
		case unix.EINTR:
			continue
		}
		return Unknown, e
	}
}
