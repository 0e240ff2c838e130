// Package writers asks the kernel whether anyone holds a file open for
// writing. The library asks it of each file its watch reads, and keepwatch
// doctor asks it of the file it examines, so that the two can never
// disagree on whether the kernel says.
//
// A read lease (fcntl F_SETLEASE, F_RDLCK) on a descriptor open read-only
// is refused with EAGAIN while anyone holds the file open for writing, this
// process included, and granted otherwise. On lets it go at once; Ask
// lets it go at once too where the filesystem's change times can vouch
// for the read that follows (see Ask), and Hold keeps it while the file
// is read, so that the answer holds for what was read. While it is held,
// a writer's open(2) waits for it: a microsecond when it is let go at
// once, a read of the file when it is held, unless the process is
// preempted or stopped meanwhile (docs/reliability.md). A writer that
// opens with O_NONBLOCK meanwhile gets EWOULDBLOCK instead of waiting. The kernel grants leases to the file's owner, or to a process
// with CAP_LEASE (root has it), where leases are on
// (/proc/sys/fs/leases-enable) and the filesystem has them; elsewhere it
// does not say. On a network or FUSE filesystem it is not asked: its
// answer there would be about this host's writers alone.
package writers

import (
	"errors"

	"github.com/keepwatch/file/internal/decide"
)

// Probe is what Ask found: the kernel's answer, whether the lease is
// still held (Release lets it go), whether the filesystem's change times
// tell every change after a stat (so that the lease could be let go at
// once), and why the kernel did not say, if it did not.
type Probe struct {
	Answer decide.Writers // decide.WritersUnknown: see Err
	Held   bool
	Fine   bool
	Err    error
}

// ErrNotSupported is why the kernel says nothing on a platform without
// leases.
var ErrNotSupported = errors.New("keepwatch: no leases on this platform")

// ErrElsewhere is why the kernel is not asked of a file on a network or
// FUSE filesystem, whose writers may be on another host or behind a
// daemon.
var ErrElsewhere = errors.New("keepwatch: writers may be elsewhere")
