package file

import (
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
)

// fakes is a notifier factory that a test scripts: it makes the constructor
// or Add fail, and hands out notifiers whose channels the test drives. Its
// channels are unbuffered, like fsnotify's.
type fakes struct {
	mu       sync.Mutex
	newErrs  []error                // the next constructor calls fail with these
	addErr   func(dir string) error // if set, Add fails when it returns an error
	closeErr error                  // what Close returns
	made     []*fakeNotifier        // nil for a failed constructor call
	madeAt   []time.Time            // when the constructor was called
}

func (fs *fakes) new() (notifier, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.madeAt = append(fs.madeAt, time.Now())
	if len(fs.newErrs) > 0 {
		err := fs.newErrs[0]
		fs.newErrs = fs.newErrs[1:]
		fs.made = append(fs.made, nil)
		return nil, err
	}
	n := &fakeNotifier{
		fs:     fs,
		events: make(chan fsnotify.Event),
		errors: make(chan error),
		closed: make(chan struct{}),
		dirs:   make(map[string]bool),
	}
	fs.made = append(fs.made, n)
	return n, nil
}

func (fs *fakes) set(fn func(fs *fakes)) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fn(fs)
}

// calls returns the number of constructor calls, failed ones included.
func (fs *fakes) calls() int {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return len(fs.made)
}

// last returns the notifier made last, or nil.
func (fs *fakes) last() *fakeNotifier {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	for i := len(fs.made) - 1; i >= 0; i-- {
		if fs.made[i] != nil {
			return fs.made[i]
		}
	}
	return nil
}

func (fs *fakes) lastMadeAt() time.Time {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fs.madeAt[len(fs.madeAt)-1]
}

// gaps returns the time between consecutive constructor calls.
func (fs *fakes) gaps() []time.Duration {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	var out []time.Duration
	for i := 1; i < len(fs.madeAt); i++ {
		out = append(out, fs.madeAt[i].Sub(fs.madeAt[i-1]))
	}
	return out
}

type fakeNotifier struct {
	fs     *fakes
	events chan fsnotify.Event
	errors chan error
	closed chan struct{}

	mu           sync.Mutex
	dirs         map[string]bool
	isClosed     bool
	eventsClosed bool
}

func (n *fakeNotifier) Add(dir string) error {
	n.fs.mu.Lock()
	addErr := n.fs.addErr
	n.fs.mu.Unlock()
	if addErr != nil {
		if err := addErr(dir); err != nil {
			return err
		}
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.dirs[dir] = true
	return nil
}

func (n *fakeNotifier) Remove(dir string) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	delete(n.dirs, dir)
	return nil
}

func (n *fakeNotifier) Want(string)            {}
func (n *fakeNotifier) Forget(map[string]bool) {}

func (n *fakeNotifier) Events() <-chan fsnotify.Event { return n.events }
func (n *fakeNotifier) Errors() <-chan error          { return n.errors }

func (n *fakeNotifier) Close() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if !n.isClosed {
		n.isClosed = true
		close(n.closed)
	}
	n.fs.mu.Lock()
	defer n.fs.mu.Unlock()
	return n.fs.closeErr
}

func (n *fakeNotifier) watched() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []string
	for d := range n.dirs {
		out = append(out, d)
	}
	return out
}

// closeEvents and closeErrors close a channel, as a broken fsnotify would.
func (n *fakeNotifier) closeEvents() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.eventsClosed = true
	close(n.events)
}

func (n *fakeNotifier) closeErrors() { close(n.errors) }

// send delivers an event, as the kernel would; it reports false if the
// notifier or its event channel was closed first.
func (n *fakeNotifier) send(name string, op fsnotify.Op) bool {
	n.mu.Lock()
	gone := n.eventsClosed
	n.mu.Unlock()
	if gone {
		return false
	}
	select {
	case n.events <- fsnotify.Event{Name: name, Op: op}:
		return true
	case <-n.closed:
		return false
	}
}

// fail delivers an error; it reports false if the notifier was closed first.
func (n *fakeNotifier) fail(err error) bool {
	select {
	case n.errors <- err:
		return true
	case <-n.closed:
		return false
	}
}
