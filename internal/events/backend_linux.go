//go:build linux

package events

import (
	"bytes"
	"encoding/binary"
	"errors"
	"github.com/keepwatch/file/internal/decide"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/keepwatch/file/internal/mountinfo"
	"golang.org/x/sys/unix"
)

// newDefaultBackend is the kernel's own inotify on Linux.
func newDefaultBackend(h Handler) (Backend, error) { return NewInotifyBackend(h) }

// inotifyMask is what a watch asks the kernel for: for its own move or
// deletion, a directory's entries appearing and going, in-place writes,
// the close that ends them and metadata (the watched file's, or a
// directory's entries'), and a file's opens and its readers' closes (who
// holds it open: the decider counts them), as report asks. The kernel
// then wakes the reader
// for nothing else that happens where the path goes: appends to a log
// beside the config, files made and removed in /tmp. Symlinks are not
// followed: the watch loop resolves them itself and watches what they lead
// to. IN_MASK_ADD adds to what the inode's watch reports already, for
// another path or another loop: one watch per inode serves them all, and
// reports what any of them asked for until the last of them is gone.
func inotifyMask(report decide.WatchKind) uint32 {
	mask := uint32(unix.IN_DONT_FOLLOW | unix.IN_EXCL_UNLINK | unix.IN_MASK_ADD)
	if report&decide.WatchSelf != 0 {
		mask |= unix.IN_DELETE_SELF | unix.IN_MOVE_SELF
	}
	if report&decide.WatchNames != 0 {
		mask |= unix.IN_CREATE | unix.IN_DELETE | unix.IN_MOVED_FROM | unix.IN_MOVED_TO
	}
	if report&decide.WatchContent != 0 {
		mask |= unix.IN_MODIFY | unix.IN_CLOSE_WRITE | unix.IN_ATTRIB
	}
	if report&decide.WatchCloses != 0 {
		mask |= unix.IN_CLOSE_WRITE
	}
	if report&decide.WatchOpens != 0 {
		mask |= unix.IN_OPEN | unix.IN_CLOSE_NOWRITE
	}
	return mask
}

// inotifyBackend is a backend on an inotify instance of its own, read
// directly rather than through fsnotify, which hides what keepwatch needs:
// the close of a written file (IN_CLOSE_WRITE), the watch descriptor behind
// each event (one per inode, however many paths lead to it), and the
// kernel dropping a watch (IN_IGNORED). It also watches the mount table, so
// that a mount or unmount over a watched path, which no inotify event
// reports, makes every watch look again.
//
// The inotify descriptor sits in the Go runtime's poller, where its
// reader waits as a network connection's does, rather than in a blocking
// system call, whose thread the scheduler is slow to wake. The mount table
// has a goroutine of its own, blocked in poll(2): the table's notice of a
// change is given once, and the runtime's poller may take it before the
// goroutine waits, and drop it; mounts are rare, so a slow wake costs
// nothing there.
type inotifyBackend struct {
	in     *os.File // the inotify instance, in the runtime's poller
	mounts int      // /proc/self/mountinfo, -1 if it cannot be polled
	wake   int      // eventfd that stops the mount table's goroutine
	h      Handler
	wg     sync.WaitGroup
	once   sync.Once

	mu    sync.Mutex // reads of the instance take turns, each handing on its batch before the next
	buf   []byte     // what they read into, under mu; room for at least 4096 events
	batch []RawEvent // what they decode it into, under mu: the handler keeps none of it
}

// NewInotifyBackend returns a backend on an inotify instance of its own,
// which hands what it reads to h.
func NewInotifyBackend(h Handler) (Backend, error) {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil, os.NewSyscallError("inotify_init1", err)
	}
	b := &inotifyBackend{in: os.NewFile(uintptr(fd), "inotify"), mounts: -1, wake: -1, h: h, buf: make([]byte, 64<<10)}
	b.wg.Go(b.readEvents)
	// The mount table reports a change to poll(2) as POLLPRI (proc(5)).
	// Without it, mounts over watched paths are only seen by the re-check.
	// It is read now, before any loop resolves a path: a mount made
	// after that differs from it.
	m, err := unix.Open("/proc/self/mountinfo", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return b, nil
	}
	table, err := readAll(m)
	if err == nil {
		b.wake, err = unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	}
	if err != nil {
		unix.Close(m)
		return b, nil
	}
	b.mounts = m
	b.wg.Go(func() { b.readMounts(table) })
	return b, nil
}

func (b *inotifyBackend) readsTheKernel() {}

// Add and Remove go through the os.File that owns the descriptor, so that
// one made after Close fails rather than reaching whatever descriptor has
// its number by then.

func (b *inotifyBackend) Add(path string, report decide.WatchKind) (int, error) {
	rc, err := b.in.SyscallConn()
	if err != nil {
		return 0, err
	}
	var wd int
	var werr error
	if err := rc.Control(func(fd uintptr) { wd, werr = unix.InotifyAddWatch(int(fd), path, inotifyMask(report)) }); err != nil {
		return 0, err
	}
	return wd, werr
}

func (b *inotifyBackend) Remove(id int) {
	rc, err := b.in.SyscallConn()
	if err != nil {
		return
	}
	// An error only says the kernel already dropped the watch.
	_ = rc.Control(func(fd uintptr) { _, _ = unix.InotifyRmWatch(int(fd), uint32(id)) })
}

// Sync returns once every event the kernel queued before it was called has
// been handed to the handler. It hands them on itself, on the caller's
// goroutine: waking the reader's goroutine for them would cost tens of
// microseconds on the path to a callback. Reads of the instance take turns
// under b.mu, each handing on what it read before the next, so events keep
// the kernel's order whoever reads them.
func (b *inotifyBackend) Sync() {
	rc, err := b.in.SyscallConn()
	if err != nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for {
		var n int
		var rerr error
		if err := rc.Control(func(fd uintptr) {
			if q := queuedBytes(int(fd)); q > 0 {
				n, rerr = readRaw(int(fd), b.buf)
			}
		}); err != nil || n <= 0 || rerr != nil {
			return // nothing queued, or a fault the reader's goroutine reports
		}
		b.handOnLocked(n)
	}
}

// readBatch reads a batch from the kernel, if there is one, and hands it
// on, under b.mu; handed reports that the handler readied a loop waiting
// on its channel with it (see Handler.Events), drained that the read took
// every event the kernel held (it left room for another).
func (b *inotifyBackend) readBatch(fd int) (handed, drained bool, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n, err := readRaw(fd, b.buf)
	if n > 0 {
		handed = b.handOnLocked(n)
	}
	return handed, err == nil && n <= len(b.buf)-maxEventSize, err
}

// maxEventSize is the size of the largest inotify event: its header, and
// a name of NAME_MAX bytes with its NUL.
const maxEventSize = unix.SizeofInotifyEvent + unix.NAME_MAX + 1

// readRaw reads the instance into p. Its descriptor never blocks (it was
// made IN_NONBLOCK, and the runtime's poller waits for it), so the read is
// a raw system call, which the scheduler is not told of: a read through
// the scheduler wakes the runtime's monitor thread (sysmon) if it sleeps,
// as it does whenever the process was idle, and the monitor then polls
// every 20 µs while anything runs. Every batch the kernel queues begins so,
// and most of a kubelet update's batches are of names no loop wants.
func readRaw(fd int, p []byte) (int, error) {
	n, _, e := unix.RawSyscall(unix.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p)))
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

// queuedBytes is how many bytes of events the instance holds, 0 if it
// cannot say: a raw ioctl, for readRaw's reason.
func queuedBytes(fd int) int {
	var q int32
	if _, _, e := unix.RawSyscall(unix.SYS_IOCTL, uintptr(fd), unix.TIOCINQ, uintptr(unsafe.Pointer(&q))); e != 0 {
		return 0
	}
	return int(q)
}

// handOnLocked hands the n bytes of events read into b.buf to the
// handler, and reports whether that readied a loop waiting on its channel.
func (b *inotifyBackend) handOnLocked(n int) bool {
	b.batch = parseInotify(b.batch[:0], b.buf[:n])
	handed := len(b.batch) > 0 && b.h.Events(b.batch)
	clear(b.batch) // its names are not to be kept alive until the next batch
	return handed
}

func (b *inotifyBackend) Caps() decide.Caps {
	return decide.Caps{Closes: true, Ancestors: true, Files: true, Opens: true}
}

// Inode names the inode of the watch id from the kernel's account of the
// instance's watches (proc(5): the inotify descriptor's fdinfo), where a
// watch the kernel dropped is no longer listed. It costs a read of one
// line per watch of the process: it is asked only where a path cannot
// answer (the decider's AskInode, after OwnWatchAdded).
func (b *inotifyBackend) Inode(id int) (decide.WatchedInode, bool) {
	rc, err := b.in.SyscallConn()
	if err != nil {
		return decide.WatchedInode{}, false
	}
	var info []byte
	var rerr error
	if err := rc.Control(func(fd uintptr) {
		info, rerr = os.ReadFile("/proc/self/fdinfo/" + strconv.Itoa(int(fd)))
	}); err != nil || rerr != nil {
		return decide.WatchedInode{}, false
	}
	return watchInode(info, id)
}

// watchInode finds the watch id in an inotify descriptor's fdinfo, whose
// watches are lines "inotify wd:<hex> ino:<hex> sdev:<hex> ...", sdev the
// kernel's encoding of the device. A watch not listed is gone.
func watchInode(info []byte, id int) (decide.WatchedInode, bool) {
	prefix := "inotify wd:" + strconv.FormatInt(int64(id), 16) + " "
	for line := range strings.Lines(string(info)) {
		if !strings.HasPrefix(line, prefix) {
			continue
		}
		var w decide.WatchedInode
		var gotIno, gotDev bool
		for _, field := range strings.Fields(line) {
			switch k, v, _ := strings.Cut(field, ":"); k {
			case "ino":
				n, err := strconv.ParseUint(v, 16, 64)
				w.Ino, gotIno = n, err == nil
			case "sdev":
				n, err := strconv.ParseUint(v, 16, 32)
				w.Dev, gotDev = unix.Mkdev(uint32(n>>20), uint32(n&(1<<20-1))), err == nil
			}
		}
		return w, gotIno && gotDev
	}
	return decide.WatchedInode{Gone: true}, true
}

// Close stops the readers, waits for them to exit, and releases the
// kernel's resources. It is idempotent.
func (b *inotifyBackend) Close() error {
	b.once.Do(func() {
		b.in.Close() // closing a file in the runtime's poller wakes its reader
		if b.wake >= 0 {
			var one [8]byte
			binary.NativeEndian.PutUint64(one[:], 1)
			_, _ = unix.Write(b.wake, one[:])
		}
		b.wg.Wait()
		for _, f := range []int{b.mounts, b.wake} {
			if f >= 0 {
				unix.Close(f)
			}
		}
	})
	return nil
}

// readEvents reads the inotify instance and hands what it reads to the
// handler, a batch per read, until Close stops it or the kernel fails it.
func (b *inotifyBackend) readEvents() {
	rc, err := b.in.SyscallConn()
	if err != nil {
		b.h.Failed(err)
		return
	}
	for {
		var rerr error
		err := rc.Read(func(fd uintptr) bool {
			var handed, drained bool
			handed, drained, rerr = b.readBatch(int(fd))
			if handed {
				// A loop waiting on its channel was readied on this P, to
				// run once the reader parks: it runs now instead, not
				// after another read of the instance (the event's way to
				// the callback; measured 19 µs at the median of the
				// hand-off in make profile's trace). A loop on a bell is
				// not: the runtime's poller finds it once the reader
				// parks, and a yield would only wake an idle processor's
				// thread (Gosched does), 3–5 µs on that way at the median
				// and 18 at p90. A batch no loop wants yields nothing.
				runtime.Gosched()
			}
			switch {
			case errors.Is(rerr, unix.EAGAIN):
				return false // nothing to read: wait
			case rerr != nil:
				return true // the loop below says what the error means
			}
			// A read that left room for another event took every event
			// queued: the reader waits in the poller at once, with no read
			// that finds nothing first (the poller was reset before this
			// read's turn began, and an event queued since wakes it).
			return !drained
		})
		switch {
		case errors.Is(err, os.ErrClosed):
			return
		case err == nil && rerr == nil:
			continue
		case err == nil && errors.Is(rerr, unix.EINTR):
			continue
		case err == nil:
			err = os.NewSyscallError("read inotify", rerr)
		}
		b.h.Failed(err)
		return
	}
}

// readMounts waits for the mount table to change, until Close wakes it.
// Each change makes the watches under the mount points that changed look
// again: those of every path that a mount or unmount moves. A wait that
// fails (ENOMEM) is made again a second later: given up, mounts would be
// seen by the re-check alone, and never if it is off. A table that cannot
// be read is compared at the next change, against the last one read.
func (b *inotifyBackend) readMounts(last []byte) {
	fds := []unix.PollFd{{Fd: int32(b.mounts), Events: unix.POLLPRI}, {Fd: int32(b.wake), Events: unix.POLLIN}}
	for {
		_, err := pollMounts(fds, -1)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case err != nil:
			if b.woken(mountsRetry) {
				return
			}
			continue
		case fds[1].Revents != 0, fds[0].Revents&unix.POLLNVAL != 0:
			return
		}
		table, err := readAll(b.mounts)
		if err != nil || bytes.Equal(table, last) {
			continue
		}
		var batch []RawEvent
		for _, point := range changedMounts(last, table) {
			batch = append(batch, RawEvent{ID: EveryWatch, Name: point, Op: decide.OpRescan})
		}
		last = table
		if len(batch) > 0 {
			b.h.Events(batch)
		}
	}
}

// pollMounts is poll(2), for the mount table's goroutine; a test makes it
// fail.
var pollMounts = unix.Poll

// mountsRetry is how long the mount table's goroutine waits after a wait
// of its that failed.
const mountsRetry = time.Second

// woken waits up to d for Close to wake the mount table's goroutine, and
// says whether it did. Its poll failing too counts as d gone by.
func (b *inotifyBackend) woken(d time.Duration) bool {
	fds := []unix.PollFd{{Fd: int32(b.wake), Events: unix.POLLIN}}
	n, err := unix.Poll(fds, int(d/time.Millisecond))
	if err != nil && !errors.Is(err, unix.EINTR) {
		time.Sleep(d)
		return false
	}
	return n > 0
}

// changedMounts lists the mount points of the mounts that one mount table
// has and the other has not (mounted, unmounted, changed), each once.
func changedMounts(old, cur []byte) []string {
	lines := func(table []byte) map[string]string {
		out := make(map[string]string)
		for _, line := range strings.Split(string(table), "\n") {
			if ms, _ := mountinfo.Parse(strings.NewReader(line)); len(ms) == 1 {
				out[line] = ms[0].Point
			}
		}
		return out
	}
	a, c := lines(old), lines(cur)
	var points []string
	for line, point := range a {
		if _, ok := c[line]; !ok && !slices.Contains(points, point) {
			points = append(points, point)
		}
	}
	for line, point := range c {
		if _, ok := a[line]; !ok && !slices.Contains(points, point) {
			points = append(points, point)
		}
	}
	return points
}

// readAll reads the file at descriptor f from its start.
func readAll(f int) ([]byte, error) {
	var out []byte
	buf := make([]byte, 16<<10)
	for off := int64(0); ; {
		n, err := unix.Pread(f, buf, off)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return out, nil
		}
		out = append(out, buf[:n]...)
		off += int64(n)
	}
}

// parseInotify appends the events in buf to out and returns it. Each
// event (inotify(7)) is a header of wd, mask, cookie and name length, then
// the name, NUL-padded.
func parseInotify(out []RawEvent, buf []byte) []RawEvent {
	const header = unix.SizeofInotifyEvent
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
			out = append(out, RawEvent{ID: EveryWatch, Op: decide.OpRescan})
			continue
		}
		if o := inotifyOp(mask); o != 0 {
			// The name is the read buffer's bytes, not a copy: the
			// handler keeps none of the batch (see handler), and most
			// names are of entries no one wants (a kubelet payload's
			// files, an editor's temporary file).
			out = append(out, RawEvent{ID: int(wd), Name: unsafe.String(unsafe.SliceData(name), len(name)), Op: o})
		}
	}
	return out
}

// inotifyOp translates an inotify mask. IN_UNMOUNT is left out: the
// kernel follows it with IN_IGNORED, and the mount table's change makes
// every watch look again anyway.
func inotifyOp(mask uint32) decide.Op {
	var o decide.Op
	if mask&(unix.IN_CREATE|unix.IN_MOVED_TO) != 0 {
		o |= decide.OpCreate
	}
	if mask&unix.IN_CREATE != 0 {
		o |= decide.OpMade
	}
	if mask&(unix.IN_DELETE|unix.IN_MOVED_FROM|unix.IN_DELETE_SELF|unix.IN_MOVE_SELF) != 0 {
		o |= decide.OpRemove
	}
	if mask&unix.IN_MODIFY != 0 {
		o |= decide.OpWrite
	}
	if mask&unix.IN_CLOSE_WRITE != 0 {
		o |= decide.OpClose
	}
	if mask&unix.IN_ATTRIB != 0 {
		o |= decide.OpAttrib
	}
	if mask&unix.IN_IGNORED != 0 {
		o |= decide.OpDropped
	}
	if mask&unix.IN_OPEN != 0 {
		o |= decide.OpOpen
	}
	if mask&unix.IN_CLOSE_NOWRITE != 0 {
		o |= decide.OpCloseNoWrite
	}
	return o
}
