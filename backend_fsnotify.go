package file

import (
	"errors"
	"path/filepath"
	"sync"

	"github.com/fsnotify/fsnotify"
)

// fsnotifyBackend is a backend on an fsnotify watcher: kqueue on macOS and
// the BSDs, ReadDirectoryChangesW on Windows. fsnotify keys watches by
// path, so each path is a watch of its own, and it reports neither the
// close of a written file nor the kernel dropping a watch; the sessions
// make up for that with the quiet window and the re-check. It also serves
// on Linux in tests, to check that the hub works with what it offers.
type fsnotifyBackend struct {
	w    *fsnotify.Watcher
	h    handler
	done chan struct{} // closed by Close
	wg   sync.WaitGroup
	once sync.Once

	mu   sync.Mutex
	ids  map[string]int // watched path → its id
	next int
}

func newFsnotifyBackend(h handler) (backend, error) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	b := &fsnotifyBackend{w: w, h: h, done: make(chan struct{}), ids: make(map[string]int)}
	b.wg.Go(b.read)
	return b, nil
}

func (b *fsnotifyBackend) Add(path string) (int, error) {
	if err := b.w.Add(path); err != nil {
		return 0, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	id, ok := b.ids[path]
	if !ok {
		b.next++
		id = b.next
		b.ids[path] = id
	}
	return id, nil
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

func (b *fsnotifyBackend) Caps() caps { return caps{} }

func (b *fsnotifyBackend) Close() error {
	var err error
	b.once.Do(func() {
		close(b.done)
		err = b.w.Close()
		b.wg.Wait()
	})
	return err
}

// read translates fsnotify's events, named by path, into events on the
// watches that see them: the watched path itself, and the entry of a
// watched directory.
func (b *fsnotifyBackend) read() {
	for {
		select {
		case ev, ok := <-b.w.Events:
			if !ok {
				b.closed(errEventsClosed)
				return
			}
			if batch := b.translate(ev); len(batch) > 0 {
				b.h.events(batch)
			}
		case err, ok := <-b.w.Errors:
			switch {
			case !ok:
				b.closed(errErrorsClosed)
				return
			case errors.Is(err, fsnotify.ErrEventOverflow):
				// Events were lost, the watches are fine: look again.
				b.h.events([]rawEvent{{id: everyWatch, op: opRescan}})
			default:
				b.h.failed(err)
				return
			}
		}
	}
}

// closed reports a channel that fsnotify closed, unless Close closed it.
func (b *fsnotifyBackend) closed(err error) {
	select {
	case <-b.done:
	default:
		b.h.failed(err)
	}
}

func (b *fsnotifyBackend) translate(ev fsnotify.Event) []rawEvent {
	name := filepath.Clean(ev.Name)
	o := opOf(ev.Op)
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []rawEvent
	if id, ok := b.ids[name]; ok {
		out = append(out, rawEvent{id: id, op: o})
	}
	if id, ok := b.ids[filepath.Dir(name)]; ok {
		out = append(out, rawEvent{id: id, name: filepath.Base(name), op: o})
	}
	return out
}

// opOf translates an fsnotify operation.
func opOf(o fsnotify.Op) op {
	var out op
	if o.Has(fsnotify.Create) {
		out |= opCreate
	}
	if o.Has(fsnotify.Remove) || o.Has(fsnotify.Rename) {
		out |= opRemove
	}
	if o.Has(fsnotify.Write) {
		out |= opWrite
	}
	if o.Has(fsnotify.Chmod) {
		out |= opAttrib
	}
	return out
}
