package events

import (
	"errors"
	"github.com/keepwatch/file/internal/decide"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"

	"github.com/fsnotify/fsnotify"
)

// fsnotifyBackend is a backend on an fsnotify watcher: kqueue on macOS and
// the BSDs, ReadDirectoryChangesW on Windows. fsnotify keys watches by
// path, so each path is a watch of its own, and it reports neither the
// close of a written file nor the kernel dropping a watch; the loops
// make up for that with the quiet window and the re-check. It also serves
// on Linux in tests, to check that the hub works with what it offers.
//
// Two goroutines: one drains fsnotify's channels into a queue and never
// waits for anything else, one hands the queue to the handler. The hop is
// needed: the hub calls Add and Remove holding its lock, and on Windows
// fsnotify's Add waits for fsnotify's own goroutine, which waits for its
// channels to be read; a reader blocked on the hub's lock would deadlock
// the three (found running the tests under Wine).
type fsnotifyBackend struct {
	w    *fsnotify.Watcher
	h    Handler
	done chan struct{} // closed by Close
	wg   sync.WaitGroup
	once sync.Once
	more chan struct{} // holds one: the queue has something to hand on

	mu    sync.Mutex
	ids   map[string]int // watched path → its id
	next  int
	queue []RawEvent // translated, not handed on yet
	lost  bool       // the queue overflowed, or fsnotify's did: hand on a rescan
	fault error      // fsnotify failed: hand it on after the queue, and stop
}

// maxFsnotifyQueue bounds the events waiting for the hub; beyond it they
// are dropped for a rescan, as the kernel's queue does.
const maxFsnotifyQueue = 4096

// NewFsnotifyBackend returns a backend on a new fsnotify watcher, which
// hands what it reads to h.
func NewFsnotifyBackend(h Handler) (Backend, error) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	b := &fsnotifyBackend{w: w, h: h, done: make(chan struct{}), more: make(chan struct{}, 1), ids: make(map[string]int)}
	b.wg.Go(b.drain)
	b.wg.Go(b.handOn)
	return b, nil
}

// Add watches path for everything fsnotify reports, whatever report
// asks: fsnotify does not let its users choose.
func (b *fsnotifyBackend) Add(path string, _ decide.WatchKind) (int, error) {
	if err := b.w.Add(path); err != nil {
		return 0, err
	}
	b.mu.Lock()
	id, ok := b.ids[path]
	if !ok {
		b.next++
		id = b.next
		b.ids[path] = id
	}
	var children []string
	if runtime.GOOS == "linux" {
		children = b.childrenLocked(path)
	}
	b.mu.Unlock()
	b.reportGone(children)
	return id, nil
}

// childrenLocked returns the watched paths directly in dir.
//
// On Linux (tests only: the inotify backend serves there), fsnotify drops
// a watched directory's own deletion when its parent is watched too, as
// the parent's event tells it. A parent watched only since then never
// tells it, and the deletion is lost: the watch of another loop on the
// parent, added as the directory went, left a loop waiting on the
// directory for the re-check (TestAStockRestartWrapperWorksUnchanged,
// about one run in a hundred). So an Add of a directory looks at the
// watched ones in it.
func (b *fsnotifyBackend) childrenLocked(dir string) []string {
	var in []string
	for p := range b.ids {
		if p != dir && filepath.Dir(p) == dir {
			in = append(in, p)
		}
	}
	return in
}

// reportGone hands on the deletion of each of paths that is not there.
// One the parent's watch reports too is told twice, which a loop takes
// as one more look.
func (b *fsnotifyBackend) reportGone(paths []string) {
	for _, p := range paths {
		if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
			b.enqueue(fsnotify.Event{Name: p, Op: fsnotify.Remove})
		}
	}
}

func (b *fsnotifyBackend) Remove(id int) {
	b.mu.Lock()
	var path string
	for p, i := range b.ids {
		if i == id {
			path = p
			delete(b.ids, p)
			break
		}
	}
	b.mu.Unlock()
	if path != "" {
		_ = b.w.Remove(path)
	}
}

func (b *fsnotifyBackend) readsTheKernel() {}

func (b *fsnotifyBackend) Caps() decide.Caps { return decide.Caps{} }

// Inode cannot tell: fsnotify keeps its watches by path.
func (b *fsnotifyBackend) Inode(int) (decide.WatchedInode, bool) { return decide.WatchedInode{}, false }

// Sync does not wait: fsnotify reports no closes, and only a close's read
// waits for what came after it.
func (b *fsnotifyBackend) Sync() {}

func (b *fsnotifyBackend) Close() error {
	var err error
	b.once.Do(func() {
		close(b.done)
		err = b.w.Close()
		b.wg.Wait()
	})
	return err
}

// drain reads fsnotify's channels into the queue, translating each event
// into events on the watches that see it, until Close. It goes on reading
// after a failure, which the hub then ends the backend for: fsnotify's
// goroutine must never be left blocked on a send, or Add, which waits for
// it on Windows, would never return.
func (b *fsnotifyBackend) drain() {
	events, errs := b.w.Events, b.w.Errors
	for events != nil || errs != nil {
		select {
		case <-b.done:
			return
		case ev, ok := <-events:
			if !ok {
				events = nil
				b.failLater(ErrEventsClosed)
				continue
			}
			b.enqueue(ev)
		case err, ok := <-errs:
			switch {
			case !ok:
				errs = nil
				b.failLater(ErrErrorsClosed)
			case errors.Is(err, fsnotify.ErrEventOverflow):
				b.loseLater() // events were lost, the watches are fine: look again
			default:
				b.failLater(err)
			}
		}
	}
}

func (b *fsnotifyBackend) enqueue(ev fsnotify.Event) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.queue) >= maxFsnotifyQueue {
		b.queue, b.lost = nil, true
	} else {
		b.queue = append(b.queue, b.translateLocked(ev)...)
	}
	b.wake()
}

func (b *fsnotifyBackend) loseLater() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.queue, b.lost = nil, true
	b.wake()
}

// failLater queues a failure, the first only, unless Close caused it.
func (b *fsnotifyBackend) failLater(err error) {
	select {
	case <-b.done:
		return
	default:
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.fault == nil {
		b.fault = err
	}
	b.wake()
}

func (b *fsnotifyBackend) wake() {
	select {
	case b.more <- struct{}{}:
	default: // a wake-up is pending; it takes everything queued
	}
}

// handOn hands the queue to the handler, until a failure or Close.
func (b *fsnotifyBackend) handOn() {
	for {
		select {
		case <-b.done:
			return
		case <-b.more:
		}
		b.mu.Lock()
		batch, lost, fault := b.queue, b.lost, b.fault
		b.queue, b.lost = nil, false
		b.mu.Unlock()
		if lost {
			b.h.Events([]RawEvent{{ID: EveryWatch, Op: decide.OpRescan}})
		}
		if len(batch) > 0 {
			b.h.Events(batch)
		}
		if fault != nil {
			b.h.Failed(fault)
			return
		}
	}
}

// translateLocked names the watches that see ev: the watched path itself,
// and the entry of a watched directory.
func (b *fsnotifyBackend) translateLocked(ev fsnotify.Event) []RawEvent {
	name := filepath.Clean(ev.Name)
	o := FsnotifyOp(ev.Op)
	var out []RawEvent
	if id, ok := b.ids[name]; ok {
		out = append(out, RawEvent{ID: id, Op: o})
	}
	if id, ok := b.ids[filepath.Dir(name)]; ok {
		out = append(out, RawEvent{ID: id, Name: filepath.Base(name), Op: o})
	}
	return out
}

// FsnotifyOp translates an fsnotify operation: what the fsnotify backend
// reports an event of fsnotify's as.
func FsnotifyOp(o fsnotify.Op) decide.Op {
	var out decide.Op
	if o.Has(fsnotify.Create) {
		out |= decide.OpCreate
	}
	if o.Has(fsnotify.Remove) || o.Has(fsnotify.Rename) {
		out |= decide.OpRemove
	}
	if o.Has(fsnotify.Write) {
		out |= decide.OpWrite
	}
	if o.Has(fsnotify.Chmod) {
		out |= decide.OpAttrib
	}
	return out
}
