package file

import "github.com/fsnotify/fsnotify"

// backend is the kernel side of the shared watcher: the one fsnotify
// watcher of the process. The hub multiplexes it among the notifiers of
// every session.
type backend interface {
	Add(path string) error
	// Remove drops the watch on path. It cannot fail in a way that matters:
	// an error only says the kernel already dropped the watch.
	Remove(path string)
	Events() <-chan fsnotify.Event
	Errors() <-chan error
	Close() error
}

// fsnotifyBackend is a backend on an fsnotify.Watcher.
type fsnotifyBackend struct{ w *fsnotify.Watcher }

func newFsnotifyBackend() (backend, error) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	return fsnotifyBackend{w}, nil
}

func (b fsnotifyBackend) Add(path string) error         { return b.w.Add(path) }
func (b fsnotifyBackend) Remove(path string)            { _ = b.w.Remove(path) }
func (b fsnotifyBackend) Events() <-chan fsnotify.Event { return b.w.Events }
func (b fsnotifyBackend) Errors() <-chan error          { return b.w.Errors }
func (b fsnotifyBackend) Close() error                  { return b.w.Close() }

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
