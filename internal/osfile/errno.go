package osfile

import (
	"errors"
	"io/fs"
	"syscall"
)

// errClass is what a failed system call says of the path, the kernel or
// the process: the one table every decision about an error reads.
type errClass uint8

const (
	// errVanished: the path no longer leads where it did (a name on the
	// way removed, or no longer a directory).
	errVanished errClass = 1 << iota
	// errRefused: permission denied.
	errRefused
	// errLimited: a kernel limit ran out (inotify instances or watches,
	// file descriptors): retrying soon would fail again.
	errLimited
	// errProcess: a read failed for a reason of the process or the
	// machine (descriptors or memory exhausted, interrupted), not of the
	// file: retrying soon will likely read it.
	errProcess
)

// errnoClasses is what each errno says. A platform adds its own codes in
// platformErrnoClasses.
var errnoClasses = map[syscall.Errno]errClass{
	syscall.ENOENT:  errVanished,
	syscall.ENOTDIR: errVanished,
	syscall.EACCES:  errRefused,
	syscall.EPERM:   errRefused,
	syscall.ENOSPC:  errLimited,
	syscall.EMFILE:  errLimited | errProcess,
	syscall.ENFILE:  errLimited | errProcess,
	syscall.ENOMEM:  errProcess,
	syscall.ENOBUFS: errProcess,
	syscall.EAGAIN:  errProcess,
	syscall.EINTR:   errProcess,
}

// classOf returns the classes of the errnos err wraps: of every one in
// its tree, as errors.Is would find each, not only of the first. It
// unwraps as errors.Is does, without the allocation errors.As makes of its
// target: it is asked on the way to the callback.
func classOf(err error) errClass {
	for err != nil {
		if errno, ok := err.(syscall.Errno); ok {
			return classOfErrno(errno)
		}
		switch u := err.(type) {
		case interface{ Unwrap() error }:
			err = u.Unwrap()
		case interface{ Unwrap() []error }:
			var c errClass
			for _, e := range u.Unwrap() {
				c |= classOf(e)
			}
			return c
		default:
			return 0
		}
	}
	return 0
}

// classOfErrno is what one errno says.
func classOfErrno(errno syscall.Errno) errClass {
	if c, ok := errnoClasses[errno]; ok {
		return c
	}
	return platformErrnoClasses[errno]
}

// Vanished reports whether an Add failed because the path no longer leads
// where it did.
func Vanished(err error) bool {
	return classOf(err)&errVanished != 0 || errors.Is(err, fs.ErrNotExist)
}

// Refused reports whether an Add failed for want of permission.
func Refused(err error) bool { return classOf(err)&errRefused != 0 }

// Limited reports whether an Add failed on a kernel limit.
func Limited(err error) bool { return classOf(err)&errLimited != 0 }

// ProcessError reports whether a read failed for a reason of the process
// or the machine, not of the file: retrying soon will likely read it.
func ProcessError(err error) bool { return classOf(err)&errProcess != 0 }

// EventsUnavailable reports whether err says filesystem events cannot be
// had (inotify instances or watches exhausted, a watch refused), as opposed
// to a watch that broke: retrying soon would fail again, polling works.
func EventsUnavailable(err error) bool {
	return classOf(err)&(errLimited|errRefused) != 0 || errors.Is(err, errors.ErrUnsupported)
}
