package writers

import (
	"errors"

	"golang.org/x/sys/unix"
)

// On asks of the file open read-only at fd. err says why the kernel does
// not say, when it does not: EACCES (not the file's owner, and no
// CAP_LEASE), EINVAL (leases off, or none on the filesystem).
func On(fd int) (Answer, error) {
	for {
		_, err := unix.FcntlInt(uintptr(fd), unix.F_SETLEASE, unix.F_RDLCK)
		switch {
		case err == nil:
			_, _ = unix.FcntlInt(uintptr(fd), unix.F_SETLEASE, unix.F_UNLCK)
			return None, nil
		case errors.Is(err, unix.EAGAIN):
			return Open, nil
		case errors.Is(err, unix.EINTR):
			continue
		}
		return Unknown, err
	}
}
