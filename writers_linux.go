package file

import (
	"io/fs"

	"github.com/keepwatch/file/internal/decide"
	"golang.org/x/sys/unix"
)

// writersOn asks the kernel whether anyone holds the file open for
// writing, on fd, a descriptor of it open read-only: a read lease
// (F_SETLEASE, F_RDLCK) is refused with EAGAIN while anyone does, this
// process included, and granted otherwise, and is let go at once (a
// writer's open waits while the lease is held: a microsecond here). The
// kernel grants leases only to the file's owner, or with CAP_LEASE, and
// not where they are turned off (fs.leases) or the filesystem has none
// (EACCES, EINVAL): then it does not say.
func writersOn(fd int) decide.Writers {
	for {
		_, err := unix.FcntlInt(uintptr(fd), unix.F_SETLEASE, unix.F_RDLCK)
		switch err {
		case nil:
			_, _ = unix.FcntlInt(uintptr(fd), unix.F_SETLEASE, unix.F_UNLCK)
			return decide.WritersNone
		case unix.EAGAIN:
			return decide.WritersOpen
		case unix.EINTR:
			continue
		}
		return decide.WritersUnknown
	}
}

// writersOf asks the kernel whether anyone holds the file at path open for
// writing, if it is still the file want describes (not known otherwise).
func writersOf(path string, want fs.FileInfo) decide.Writers {
	f, err := openToRead(path)
	if err != nil {
		return decide.WritersUnknown
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil || !info.Mode().IsRegular() || !sameFile(info, want) {
		return decide.WritersUnknown
	}
	return writersOn(f.(*rawFile).fd)
}

// writersOfOpen asks the kernel about the writers of the file r, open for
// reading.
func writersOfOpen(r readable) decide.Writers {
	if f, ok := r.(*rawFile); ok {
		return writersOn(f.fd)
	}
	return decide.WritersUnknown
}
