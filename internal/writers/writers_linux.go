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
	a, err := Hold(fd)
	if a == None {
		Release(fd)
	}
	return a, err
}

// Hold asks as On does, and where no one holds the file open for writing
// keeps the lease until Release (or until fd is closed): no writer's open
// gets past it meanwhile, so what is read of the file in between is what
// it holds, with no writer at work. Asked after a read instead, the
// kernel could say "no writer" of one that finished between the read and
// the question, and a half it read would pass for the file.
func Hold(fd int) (Answer, error) {
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
		// A raw call: On takes and lets go of the lease with nothing in
		// between that the scheduler could hand off (Hold's read between
		// the two is an ordinary one).
		_, _, e := unix.RawSyscall(unix.SYS_FCNTL, uintptr(fd), unix.F_SETLEASE, unix.F_RDLCK)
		switch e {
		case 0:
			return None, nil
		case unix.EAGAIN:
			return Open, nil
		case unix.EINTR:
			continue
		}
		return Unknown, e
	}
}

// Release lets go of the lease Hold took on fd.
func Release(fd int) {
	_, _, _ = unix.RawSyscall(unix.SYS_FCNTL, uintptr(fd), unix.F_SETLEASE, unix.F_UNLCK)
}
