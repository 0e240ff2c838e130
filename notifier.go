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
func (n fsnotifyNotifier) Events() <-chan fsnotify.Event { return n.w.Events }
func (n fsnotifyNotifier) Errors() <-chan error          { return n.w.Errors }
func (n fsnotifyNotifier) Close() error                  { return n.w.Close() }

// noEvents is the notifier of a polling session: it watches nothing and
// never delivers.
type noEvents struct{}

func (noEvents) Add(string) error              { return nil }
func (noEvents) Remove(string) error           { return nil }
func (noEvents) Events() <-chan fsnotify.Event { return nil }
func (noEvents) Errors() <-chan error          { return nil }
func (noEvents) Close() error                  { return nil }
