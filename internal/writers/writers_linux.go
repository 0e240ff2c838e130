package writers

import (
	"golang.org/x/sys/unix"

	"github.com/keepwatch/file/internal/decide"
	"github.com/keepwatch/file/internal/fsinfo"
)

// On asks of the file open read-only at fd, opened through the mount
// whose unique ID is mount (0 if not known: see fsinfo.Magic). err says
// why the kernel does not say, when it does not: ErrElsewhere (a network
// or FUSE filesystem), EACCES (not the file's owner, and no CAP_LEASE),
// EINVAL (leases off, or none on the filesystem).
func On(fd int, mount uint64) (decide.Writers, error) {
	a, err := Hold(fd, mount)
	if a == decide.WritersNone {
		Release(fd)
	}
	return a, err
}

// Ask asks of the file open read-only at fd (mount as for On), before it
// is read, whether anyone holds it open for writing. Where the filesystem
// gives every change made after a stat a change time of its own
// (fsinfo.FineTimes), the lease is let go at once (Fine): a writer that
// opens the file after that and changes it before the read is done leaves
// its change time other than the stat taken before the question, which
// the caller compares with one taken after the read. Elsewhere a change may leave
// the times as they were, and the lease is kept until Release (Held), so
// that no writer gets in before the read is done: a writer's open waits
// for the read, and for as long as this process is stopped meanwhile.
func Ask(fd int, mount uint64) Probe {
	magic, err := local(fd, mount)
	if err != nil {
		return Probe{Err: err}
	}
	p := Probe{Fine: fsinfo.FineTimes(magic)}
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

// Hold asks as On does (mount likewise), and where no one holds the file
// open for writing keeps the lease until Release (or until fd is closed):
// no writer's open gets past it meanwhile, so what is read of the file in
// between is what it holds, with no writer at work. Asked after a read instead, the
// kernel could say "no writer" of one that finished between the read and
// the question, and a half it read would pass for the file.
func Hold(fd int, mount uint64) (decide.Writers, error) {
	if _, err := local(fd, mount); err != nil {
		return decide.WritersUnknown, err
	}
	return lease(fd)
}

// local returns the statfs magic number of the filesystem holding fd, or
// ErrElsewhere where the kernel's word on its writers is about this host's
// only: it would grant a FUSE file's lease whatever its daemon writes, and
// refuse an NFS file's for want of a delegation.
func local(fd int, mount uint64) (int64, error) {
	magic, err := fsinfo.Magic(fd, mount)
	if err != nil {
		return 0, err
	}
	if _, elsewhere := fsinfo.Kind(magic); elsewhere {
		return 0, ErrElsewhere
	}
	return magic, nil
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
