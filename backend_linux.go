//go:build linux

package file

import (
	"encoding/binary"
	"errors"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// newDefaultBackend is the kernel's own inotify on Linux.
func newDefaultBackend() (backend, error) { return newInotifyBackend() }

// inotifyMask is what every watch asks for, directory or file: entries
// appearing and going, in-place writes and the close that ends them,
// metadata, and the watched inode itself deleted or moved. Symlinks are
// not followed: the session resolves them itself and watches what they
// lead to.
const inotifyMask = unix.IN_CREATE | unix.IN_DELETE | unix.IN_MOVED_FROM | unix.IN_MOVED_TO |
	unix.IN_MODIFY | unix.IN_CLOSE_WRITE | unix.IN_ATTRIB | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF |
	unix.IN_DONT_FOLLOW | unix.IN_EXCL_UNLINK

// inotifyBackend is a backend on an inotify instance of its own, read
// directly rather than through fsnotify, which hides what keepwatch needs:
// the close of a written file (IN_CLOSE_WRITE), the watch descriptor behind
// each event (one per inode, however many paths lead to it), and the
// kernel dropping a watch (IN_IGNORED, IN_UNMOUNT). It also polls the mount
// table, so that a mount or unmount over a watched path, which no inotify
// event reports, makes every watch look again.
//
// One goroutine waits in epoll_wait for the inotify descriptor, the mount
// table and an eventfd that close uses to stop it.
type inotifyBackend struct {
	fd     int // the inotify instance
	epfd   int // epoll over fd, mounts and wake
	wake   int // eventfd: written by close to stop the reader
	mounts int // /proc/self/mountinfo, -1 if it cannot be polled

	evs    chan []rawEvent
	errs   chan error
	done   chan struct{} // closed by close: the reader must stop
	exited chan struct{} // closed when the reader has exited
	once   sync.Once
}

func newInotifyBackend() (backend, error) {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil, os.NewSyscallError("inotify_init1", err)
	}
	b := &inotifyBackend{fd: fd, epfd: -1, wake: -1, mounts: -1,
		evs: make(chan []rawEvent), errs: make(chan error, 1),
		done: make(chan struct{}), exited: make(chan struct{})}
	if err := b.setUp(); err != nil {
		b.closeFDs()
		return nil, err
	}
	go b.read()
	return b, nil
}

// setUp makes the epoll set: the inotify descriptor, the eventfd that
// stops the reader, and the mount table if it can be polled.
func (b *inotifyBackend) setUp() error {
	var err error
	if b.epfd, err = unix.EpollCreate1(unix.EPOLL_CLOEXEC); err != nil {
		return os.NewSyscallError("epoll_create1", err)
	}
	if b.wake, err = unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK); err != nil {
		return os.NewSyscallError("eventfd", err)
	}
	if err := b.poll(b.fd, unix.EPOLLIN); err != nil {
		return err
	}
	if err := b.poll(b.wake, unix.EPOLLIN); err != nil {
		return err
	}
	// The mount table reports a change as EPOLLPRI (proc(5)). Without it,
	// mounts over watched paths are only seen by the periodic re-check.
	if m, err := unix.Open("/proc/self/mountinfo", unix.O_RDONLY|unix.O_CLOEXEC, 0); err == nil {
		if b.poll(m, unix.EPOLLPRI) == nil {
			b.mounts = m
		} else {
			unix.Close(m)
		}
	}
	return nil
}

func (b *inotifyBackend) poll(fd int, events uint32) error {
	ev := unix.EpollEvent{Events: events, Fd: int32(fd)}
	return os.NewSyscallError("epoll_ctl", unix.EpollCtl(b.epfd, unix.EPOLL_CTL_ADD, fd, &ev))
}

func (b *inotifyBackend) Add(path string) (int, error) {
	wd, err := unix.InotifyAddWatch(b.fd, path, inotifyMask)
	if err != nil {
		return 0, err
	}
	return wd, nil
}

func (b *inotifyBackend) Remove(id int) {
	// An error only says the kernel already dropped the watch.
	_, _ = unix.InotifyRmWatch(b.fd, uint32(id))
}

func (b *inotifyBackend) Events() <-chan []rawEvent { return b.evs }
func (b *inotifyBackend) Errors() <-chan error      { return b.errs }

func (b *inotifyBackend) Caps() caps {
	return caps{closes: true, ancestors: true, files: true}
}

// close stops the reader, waits for it to exit, and releases the kernel's
// resources. It is idempotent.
func (b *inotifyBackend) Close() error {
	b.once.Do(func() {
		close(b.done)
		var one [8]byte
		binary.NativeEndian.PutUint64(one[:], 1)
		_, _ = unix.Write(b.wake, one[:])
		<-b.exited
		b.closeFDs()
	})
	return nil
}

func (b *inotifyBackend) closeFDs() {
	for _, fd := range []int{b.epfd, b.wake, b.mounts, b.fd} {
		if fd >= 0 {
			unix.Close(fd)
		}
	}
}

// read waits for the kernel and hands what it says on, a batch per read,
// until close stops it or the kernel fails it.
func (b *inotifyBackend) read() {
	defer close(b.exited)
	buf := make([]byte, 64<<10) // room for at least 4096 events
	ready := make([]unix.EpollEvent, 3)
	for {
		n, err := unix.EpollWait(b.epfd, ready, -1)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			b.fail(os.NewSyscallError("epoll_wait", err))
			return
		}
		for _, r := range ready[:n] {
			var batch []rawEvent
			switch {
			case int(r.Fd) == b.wake:
				return
			case int(r.Fd) == b.fd:
				batch, err = b.drain(buf)
			default: // the mount table changed
				batch = []rawEvent{{id: everyWatch, op: opRescan}}
			}
			if err != nil {
				b.fail(err)
				return
			}
			if len(batch) > 0 && !b.send(batch) {
				return
			}
		}
	}
}

// drain reads what the inotify descriptor holds now.
func (b *inotifyBackend) drain(buf []byte) ([]rawEvent, error) {
	n, err := unix.Read(b.fd, buf)
	switch {
	case errors.Is(err, unix.EAGAIN), errors.Is(err, unix.EINTR):
		return nil, nil
	case err != nil:
		return nil, os.NewSyscallError("read inotify", err)
	}
	return parseInotify(buf[:n]), nil
}

func (b *inotifyBackend) send(batch []rawEvent) bool {
	select {
	case b.evs <- batch:
		return true
	case <-b.done:
		return false
	}
}

func (b *inotifyBackend) fail(err error) {
	select {
	case b.errs <- err:
	default:
	}
}

// parseInotify decodes the events in buf (inotify(7)): a header of wd,
// mask, cookie and name length, then the name, NUL-padded.
func parseInotify(buf []byte) []rawEvent {
	const header = unix.SizeofInotifyEvent
	var out []rawEvent
	for len(buf) >= header {
		wd := int32(binary.NativeEndian.Uint32(buf[0:]))
		mask := binary.NativeEndian.Uint32(buf[4:])
		size := int(binary.NativeEndian.Uint32(buf[12:]))
		if len(buf) < header+size {
			break // cannot happen: the kernel writes whole events
		}
		name := buf[header : header+size]
		for len(name) > 0 && name[len(name)-1] == 0 {
			name = name[:len(name)-1]
		}
		buf = buf[header+size:]
		if mask&unix.IN_Q_OVERFLOW != 0 {
			out = append(out, rawEvent{id: everyWatch, op: opRescan})
			continue
		}
		if o := inotifyOp(mask); o != 0 {
			out = append(out, rawEvent{id: int(wd), name: string(name), op: o})
		}
	}
	return out
}

// inotifyOp translates an inotify mask. IN_UNMOUNT is left out: the
// kernel follows it with IN_IGNORED, and the mount table's change makes
// every watch look again anyway.
func inotifyOp(mask uint32) op {
	var o op
	if mask&(unix.IN_CREATE|unix.IN_MOVED_TO) != 0 {
		o |= opCreate
	}
	if mask&(unix.IN_DELETE|unix.IN_MOVED_FROM|unix.IN_DELETE_SELF|unix.IN_MOVE_SELF) != 0 {
		o |= opRemove
	}
	if mask&unix.IN_MODIFY != 0 {
		o |= opWrite
	}
	if mask&unix.IN_CLOSE_WRITE != 0 {
		o |= opClose
	}
	if mask&unix.IN_ATTRIB != 0 {
		o |= opAttrib
	}
	if mask&unix.IN_IGNORED != 0 {
		o |= opDropped
	}
	return o
}
