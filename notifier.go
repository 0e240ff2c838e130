package file

import "github.com/fsnotify/fsnotify"

// notifier is the source of filesystem events for one watch session. It is
// the seam through which tests inject every failure the real one can have:
// a constructor or Add that fails, an error or overflow on Errors, a channel
// that closes.
//
// Events and Errors must both be drained by the user until Close. An event
// with an empty Name (lostEvent) means events were dropped: re-resolve and
// re-read everything. An error on Errors means the notifier broke; the
// session ends and is re-armed with a full re-read.
type notifier interface {
	Add(dir string) error
	Remove(dir string) error
	// Want says that events naming path matter. A notifier may drop events
	// that name neither a wanted path nor a watched directory itself. The
	// session wants each path before it looks it up, so no change to it can
	// fall between the look and the wish.
	Want(path string)
	// Forget drops the wanted paths that are not in keep.
	Forget(keep map[string]bool)
	Events() <-chan fsnotify.Event
	Errors() <-chan error
	Close() error
}

// fsnotifyNotifier is a notifier backed by its own fsnotify.Watcher.
type fsnotifyNotifier struct{ w *fsnotify.Watcher }

func newFsnotify() (notifier, error) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	return fsnotifyNotifier{w}, nil
}

func (n fsnotifyNotifier) Add(dir string) error          { return n.w.Add(dir) }
func (n fsnotifyNotifier) Remove(dir string) error       { return n.w.Remove(dir) }
func (n fsnotifyNotifier) Want(string)                   {}
func (n fsnotifyNotifier) Forget(map[string]bool)        {}
func (n fsnotifyNotifier) Events() <-chan fsnotify.Event { return n.w.Events }
func (n fsnotifyNotifier) Errors() <-chan error          { return n.w.Errors }
func (n fsnotifyNotifier) Close() error                  { return n.w.Close() }

// noEvents is the notifier of a polling session: it watches nothing and
// never delivers.
type noEvents struct{}

func (noEvents) Add(string) error              { return nil }
func (noEvents) Remove(string) error           { return nil }
func (noEvents) Want(string)                   {}
func (noEvents) Forget(map[string]bool)        {}
func (noEvents) Events() <-chan fsnotify.Event { return nil }
func (noEvents) Errors() <-chan error          { return nil }
func (noEvents) Close() error                  { return nil }
