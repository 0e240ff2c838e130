package events

import (
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// NewBell returns a bell on an eventfd in the runtime's poller, or nil if
// the kernel gives none (the loop then waits on its channels).
func NewBell() *Bell {
	fd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		return nil
	}
	return &Bell{f: os.NewFile(uintptr(fd), "keepwatch-bell")}
}

// ring adds one to the eventfd's count: a raw write, which never blocks
// (the count would have to reach 2⁶⁴−1), and wakes no thread of the
// runtime but the poller's. Control keeps the descriptor from being
// closed, and its number reused, while it writes.
func (b *Bell) ring() {
	rc, err := b.f.SyscallConn()
	if err != nil {
		return
	}
	one := uint64(1)
	_ = rc.Control(func(fd uintptr) {
		_, _, _ = unix.RawSyscall(unix.SYS_WRITE, fd, uintptr(unsafe.Pointer(&one)), unsafe.Sizeof(one))
	})
}

// wait reads the eventfd's count through the runtime's poller, with raw
// reads, as ring writes it: a read through the scheduler would wake the
// runtime's monitor thread if it sleeps, as it does whenever the process
// was idle, at the loop's every wake, even one for events that ask for
// nothing (a kubelet update's old payload going), which then makes no
// system call of its own. The deadline set before it ends it too.
func (b *Bell) wait() {
	rc, err := b.f.SyscallConn()
	if err != nil {
		return
	}
	_ = rc.Read(func(fd uintptr) bool {
		_, _, e := unix.RawSyscall(unix.SYS_READ, fd, uintptr(unsafe.Pointer(&b.buf[0])), uintptr(len(b.buf)))
		return e != unix.EAGAIN // a count, or an error that another read would give too
	})
}
