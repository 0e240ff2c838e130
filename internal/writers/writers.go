// Package writers asks the kernel whether anyone holds a file open for
// writing. The library asks it of each file its watch reads, and keepwatch
// doctor asks it of the file it examines, so that the two can never
// disagree on whether the kernel says.
//
// A read lease (fcntl F_SETLEASE, F_RDLCK) on a descriptor open read-only
// is refused with EAGAIN while anyone holds the file open for writing, this
// process included, and granted otherwise. On lets it go at once; Hold
// keeps it while the file is read, so that the answer holds for what was
// read. While it is held, a writer's open(2) waits for it: a microsecond
// for On, a read of the file for Hold, unless the process is preempted
// meanwhile (up to 28 ms measured beside two CPU hogs;
// docs/reliability.md). A writer that opens with O_NONBLOCK meanwhile gets
// EWOULDBLOCK instead of waiting. The kernel grants leases to the file's owner, or to a process
// with CAP_LEASE (root has it), where leases are on
// (/proc/sys/fs/leases-enable) and the filesystem has them; elsewhere it
// does not say. On a network or FUSE filesystem it is not asked: its
// answer there would be about this host's writers alone.
package writers

import "errors"

// Answer is what the kernel says of a file's writers.
type Answer uint8

const (
	Unknown Answer = iota // the kernel does not say: see Err
	None                  // no one holds the file open for writing
	Open                  // someone does
)

// ErrNotSupported is why the kernel says nothing on a platform without
// leases.
var ErrNotSupported = errors.New("keepwatch: no leases on this platform")

// ErrElsewhere is why the kernel is not asked of a file on a network or
// FUSE filesystem, whose writers may be on another host or behind a
// daemon.
var ErrElsewhere = errors.New("keepwatch: writers may be elsewhere")
