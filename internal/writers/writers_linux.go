package writers

import (
	"golang.org/x/sys/unix"

	"github.com/keepwatch/file/internal/decide"
	"github.com/keepwatch/file/internal/fsinfo"
)

// On asks of the file open read-only at fd. err says why the kernel does
// not say, when it does not: ErrElsewhere (a network or FUSE filesystem),
// EACCES (not the file's owner, and no CAP_LEASE), EINVAL (leases off, or
// none on the filesystem).
func On(fd int) (decide.Writers, error) {
	a, err := Hold(fd)
	if a == decide.WritersNone {
		Release(fd)
	}
	return a, err
}

// Ask asks of the file open read-only at fd, before it is read, whether
// anyone holds it open for writing. Where the filesystem gives every
// change made after a stat a change time of its own (fsinfo.FineTimes),
// the lease is let go at once (Fine): a writer that opens the file after
// that and changes it before the read is done leaves its change time
// other than the stat taken before the question, which the caller
// compares with one taken after the read. Elsewhere a change may leave
// the times as they were, and the lease is kept until Release (Held), so
// that no writer gets in before the read is done: a writer's open waits
// for the read, and for as long as this process is stopped meanwhile.
func Ask(fd int) Probe {
	var st unix.Statfs_t
	if err := unix.Fstatfs(fd, &st); err != nil {
		return Probe{Err: err}
	}
	if _, elsewhere := fsinfo.Kind(int64(st.Type)); elsewhere {
		// The kernel would grant a FUSE file's lease whatever its daemon
		// writes, and refuse an NFS file's for want of a delegation: its
		// answer is about this host's writers only.
		return Probe{Err: ErrElsewhere}
	}
	p := Probe{Fine: fsinfo.FineTimes(int64(st.Type))}
	p.Answer, p.Err = lease(fd)
	if p.Answer == decide.WritersNone {
		if p.Fine {
			Release(fd)
		} else {
			p.Held = true
		}
	}
	return p
}

// Hold asks as On does, and where no one holds the file open for writing
// keeps the lease until Release (or until fd is closed): no writer's open
// gets past it meanwhile, so what is read of the file in between is what
// it holds, with no writer at work. Asked after a read instead, the
// kernel could say "no writer" of one that finished between the read and
// the question, and a half it read would pass for the file.
func Hold(fd int) (decide.Writers, error) {
	var st unix.Statfs_t
	if err := unix.Fstatfs(fd, &st); err != nil {
		return decide.WritersUnknown, err
	}
	if _, elsewhere := fsinfo.Kind(int64(st.Type)); elsewhere {
		return decide.WritersUnknown, ErrElsewhere
	}
	return lease(fd)
}

// lease takes a read lease on fd, if the kernel grants one: None, held
// until Release; Open, refused for a writer; Unknown, and why, where the
// kernel does not say.
func lease(fd int) (decide.Writers, error) {
	for {
		// A raw call: On takes and lets go of the lease with nothing in
		// between that the scheduler could hand off (Hold's read between
		// the two is an ordinary one).
		_, _, e := unix.RawSyscall(unix.SYS_FCNTL, uintptr(fd), unix.F_SETLEASE, unix.F_RDLCK)
		switch e {
		case 0:
			return decide.WritersNone, nil
		case unix.EAGAIN:
			return decide.WritersOpen, nil
		case unix.EINTR:
			continue
		}
		return decide.WritersUnknown, e
	}
}

// Release lets go of the lease Hold took on fd.
func Release(fd int) {
	_, _, _ = unix.RawSyscall(unix.SYS_FCNTL, uintptr(fd), unix.F_SETLEASE, unix.F_UNLCK)
}
