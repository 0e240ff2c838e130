package file

import (
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
)

// fakes is a notifier factory that a test scripts: it makes the constructor
// or Add fail, and hands out notifiers whose channels the test drives.
type fakes = fakeFactory[event]

// fakeNotifier is a scripted notifier for a session.
type fakeNotifier = fakeWatcher[event]

// fakeBackends is the same for a hub: it hands out scripted backends.
type fakeBackends = fakeFactory[fsnotify.Event]

// fakeFactory makes scripted watchers, notifiers or backends, whose events
// are of type E. Their channels are unbuffered, like fsnotify's.
type fakeFactory[E any] struct {
	mu       sync.Mutex
	newErrs  []error                // the next constructor calls fail with these
	addErr   func(dir string) error // if set, Add fails when it returns an error
	closeErr error                  // what Close returns
	made     []*fakeWatcher[E]      // nil for a failed constructor call
	madeAt   []time.Time            // when the constructor was called
}

// make is the constructor the code under test calls.
func (fs *fakeFactory[E]) make() (*fakeWatcher[E], error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.madeAt = append(fs.madeAt, time.Now())
	if len(fs.newErrs) > 0 {
		err := fs.newErrs[0]
		fs.newErrs = fs.newErrs[1:]
		fs.made = append(fs.made, nil)
		return nil, err
	}
	w := &fakeWatcher[E]{
		fs:     fs,
		events: make(chan E),
		errors: make(chan error),
		closed: make(chan struct{}),
		dirs:   make(map[string]bool),
		wants:  make(map[string]bool),
	}
	fs.made = append(fs.made, w)
	return w, nil
}

// new makes a notifier: withNotifier(fs.new).
func (fs *fakeFactory[E]) new() (notifier, error) {
	w, err := fs.make()
	if err != nil {
		return nil, err
	}
	return any(w).(notifier), nil
}

// newBackend makes a backend: newHub(fs.newBackend).
func (fs *fakeFactory[E]) newBackend() (backend, error) {
	w, err := fs.make()
	if err != nil {
		return nil, err
	}
	return any(w).(backend), nil
}

func (fs *fakeFactory[E]) set(fn func(fs *fakeFactory[E])) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fn(fs)
}

// calls returns the number of constructor calls, failed ones included.
func (fs *fakeFactory[E]) calls() int {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return len(fs.made)
}

// last returns the watcher made last, or nil.
func (fs *fakeFactory[E]) last() *fakeWatcher[E] {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	for _, w := range slices.Backward(fs.made) {
		if w != nil {
			return w
		}
	}
	return nil
}

func (fs *fakeFactory[E]) lastMadeAt() time.Time {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fs.madeAt[len(fs.madeAt)-1]
}

// gaps returns the time between consecutive constructor calls.
func (fs *fakeFactory[E]) gaps() []time.Duration {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	var out []time.Duration
	for i := 1; i < len(fs.madeAt); i++ {
		out = append(out, fs.madeAt[i].Sub(fs.madeAt[i-1]))
	}
	return out
}

// fakeWatcher is a scripted notifier or backend: the test sends its events
// and errors, closes its channels, and reads what it watches and wants.
type fakeWatcher[E any] struct {
	fs     *fakeFactory[E]
	events chan E
	errors chan error
	closed chan struct{}

	mu           sync.Mutex
	dirs         map[string]bool
	wants        map[string]bool
	isClosed     bool
	eventsClosed bool
}

func (w *fakeWatcher[E]) Add(dir string) error {
	w.fs.mu.Lock()
	addErr := w.fs.addErr
	w.fs.mu.Unlock()
	if addErr != nil {
		if err := addErr(dir); err != nil {
			return err
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.dirs[dir] = true
	return nil
}

func (w *fakeWatcher[E]) Remove(dir string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.dirs, dir)
}

func (w *fakeWatcher[E]) Want(path string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.wants[path] = true
}

func (w *fakeWatcher[E]) Forget(keep map[string]bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for p := range w.wants {
		if !keep[p] {
			delete(w.wants, p)
		}
	}
}

func (w *fakeWatcher[E]) Events() <-chan E     { return w.events }
func (w *fakeWatcher[E]) Errors() <-chan error { return w.errors }

func (w *fakeWatcher[E]) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.isClosed {
		w.isClosed = true
		close(w.closed)
	}
	w.fs.mu.Lock()
	defer w.fs.mu.Unlock()
	return w.fs.closeErr
}

func (w *fakeWatcher[E]) watched() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Sorted(maps.Keys(w.dirs))
}

func (w *fakeWatcher[E]) wanted() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Sorted(maps.Keys(w.wants))
}

func (w *fakeWatcher[E]) isClosedNow() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.isClosed
}

// closeEvents and closeErrors close a channel, as a broken fsnotify would.
func (w *fakeWatcher[E]) closeEvents() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.eventsClosed = true
	close(w.events)
}

func (w *fakeWatcher[E]) closeErrors() { close(w.errors) }

// deliver sends an event, as the kernel would; it reports false if the
// watcher or its event channel was closed first.
func (w *fakeWatcher[E]) deliver(ev E) bool {
	w.mu.Lock()
	gone := w.eventsClosed
	w.mu.Unlock()
	if gone {
		return false
	}
	select {
	case w.events <- ev:
		return true
	case <-w.closed:
		return false
	}
}

// fail delivers an error; it reports false if the watcher was closed first.
func (w *fakeWatcher[E]) fail(err error) bool {
	select {
	case w.errors <- err:
		return true
	case <-w.closed:
		return false
	}
}

// send delivers a session event.
func send(n *fakeNotifier, name string, o op) bool {
	return n != nil && n.deliver(event{name: name, op: o})
}

// sendRaw delivers a backend event.
func sendRaw(b *fakeWatcher[fsnotify.Event], name string, o fsnotify.Op) bool {
	return b.deliver(fsnotify.Event{Name: name, Op: o})
}
