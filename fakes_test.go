package file

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/keepwatch/file/internal/decide"
	"github.com/keepwatch/file/internal/events"
	"github.com/keepwatch/file/internal/osfile"
)

// fakes is a notifier factory that a test scripts: it makes the constructor
// or Add fail, says what the notifiers can see, and hands out notifiers
// whose channels the test drives.
type fakes struct {
	mu       sync.Mutex
	newErrs  []error                 // the next constructor calls fail with these
	addErr   func(path string) error // if set, Add fails when it returns an error
	afterAdd func(path string)       // if set, Add calls it once it watched path: what happens right after
	dropped  map[int]bool            // watches Inode says the kernel dropped (their inode deleted)
	closeErr error                   // what Close returns
	caps     decide.Caps             // what the notifiers say they can see
	onSync   func(n *fakeNotifier)   // if set, Sync calls it: what the kernel queued by then arrives
	buffered bool                    // the notifiers' event channels hold a few events, as the hub's do
	made     []*fakeNotifier         // nil for a failed constructor call
	madeAt   []time.Time             // when the constructor was called
}

// new is the constructor: withNotifier(fs.new).
func (fs *fakes) new() (events.Notifier, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.madeAt = append(fs.madeAt, time.Now())
	if len(fs.newErrs) > 0 {
		err := fs.newErrs[0]
		fs.newErrs = fs.newErrs[1:]
		fs.made = append(fs.made, nil)
		return nil, err
	}
	n := &fakeNotifier{fakeChannels: newFakeChannels(fs.buffered), fs: fs,
		paths: make(map[string]bool), reports: make(map[string]decide.WatchKind), wants: make(map[string]bool), ids: make(map[fakeInode]int), pathIDs: make(map[string]int)}
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
	for _, n := range slices.Backward(fs.made) {
		if n != nil {
			return n
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

// fakeNotifier is a scripted notifier: the test sends its events and
// errors, closes its channels, and reads what it watches and wants.
type fakeNotifier struct {
	fakeChannels
	fs      *fakes
	paths   map[string]bool             // guarded by mu
	reports map[string]decide.WatchKind // what each path's watch was asked to report; guarded by mu
	wants   map[string]bool             // guarded by mu
	ids     map[fakeInode]int           // guarded by mu
	pathIDs map[string]int              // the id each path was last watched with; guarded by mu
	lastID  int                         // guarded by mu
}

// Add watches path, for what report asks (recorded in reports). Its id is
// that of the inode path names now, as the kernel's is: the same for the
// same inode, whatever its name, a new one for another.
func (n *fakeNotifier) Add(path string, report decide.WatchKind) (int, error) {
	n.fs.mu.Lock()
	addErr := n.fs.addErr
	n.fs.mu.Unlock()
	if addErr != nil {
		if err := addErr(path); err != nil {
			return 0, err
		}
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.paths[path] = true
	n.reports[path] |= report
	key := fakeInode{path: path}
	if info, err := os.Lstat(path); err == nil {
		key.dev, key.ino = osfile.ID(info)
		key.path = ""
	}
	id, ok := n.ids[key]
	if !ok {
		n.lastID++
		id = n.lastID
		n.ids[key] = id
	}
	n.pathIDs[path] = id
	n.fs.mu.Lock()
	after := n.fs.afterAdd
	n.fs.mu.Unlock()
	if after != nil {
		n.mu.Unlock()
		after(path)
		n.mu.Lock()
	}
	return id, nil
}

// fakeInode is what a fake watch's id stands for: an inode, or a path
// where there is none to stat.
type fakeInode struct {
	path     string
	dev, ino uint64
}

// sendOwn delivers an event on the watch of path itself, as the kernel
// reports a file's own events: with its watch's id.
func sendOwn(n *fakeNotifier, path string, o decide.Op) bool {
	n.mu.Lock()
	id := n.pathIDs[path]
	n.mu.Unlock()
	return n != nil && n.deliver(decide.Event{Name: path, Op: o, Watch: id})
}

func (n *fakeNotifier) Remove(path string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	delete(n.paths, path)
}

func (n *fakeNotifier) Want(path string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.wants[path] = true
}

func (n *fakeNotifier) WantOnly(keep map[string]bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for p := range n.wants {
		if !keep[p] {
			delete(n.wants, p)
		}
	}
}

func (n *fakeNotifier) Sync() {
	n.fs.mu.Lock()
	onSync := n.fs.onSync
	n.fs.mu.Unlock()
	if onSync != nil {
		onSync(n)
	}
}

// Inode names the inode the watch id was added for, as the kernel's
// fdinfo does, whatever the path shows now, or says it is gone if the
// test says the kernel dropped it.
func (n *fakeNotifier) Inode(id int) (decide.WatchedInode, bool) {
	n.fs.mu.Lock()
	dropped := n.fs.dropped[id]
	n.fs.mu.Unlock()
	if dropped {
		return decide.WatchedInode{Gone: true}, true
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	for k, i := range n.ids {
		if i == id && k.path == "" {
			return decide.WatchedInode{Dev: k.dev, Ino: k.ino}, true
		}
	}
	return decide.WatchedInode{}, false
}

func (n *fakeNotifier) Caps() decide.Caps {
	n.fs.mu.Lock()
	defer n.fs.mu.Unlock()
	return n.fs.caps
}

func (n *fakeNotifier) Close() error {
	n.markClosed()
	n.fs.mu.Lock()
	defer n.fs.mu.Unlock()
	return n.fs.closeErr
}

// watched lists the paths watched, sorted.
func (n *fakeNotifier) watched() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Sorted(maps.Keys(n.paths))
}

func (n *fakeNotifier) wanted() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Sorted(maps.Keys(n.wants))
}

// send delivers a session event; it reports false if n is nil or closed.
func send(n *fakeNotifier, name string, o decide.Op) bool {
	return n != nil && n.deliver(decide.Event{Name: name, Op: o})
}

// fakeBackends is a backend factory for the tests of providers on a hub of
// their own (internal/events has its own for the hub's tests): it hands out
// backends whose events and failures the test makes.
type fakeBackends struct {
	mu   sync.Mutex
	caps decide.Caps // what the backends say they can see
	made []*fakeBackend
}

func (fb *fakeBackends) newBackend(h events.Handler) (events.Backend, error) {
	fb.mu.Lock()
	defer fb.mu.Unlock()
	b := &fakeBackend{h: h, caps: fb.caps, ids: make(map[string]int), watches: make(map[int]bool)}
	fb.made = append(fb.made, b)
	return b, nil
}

func (fb *fakeBackends) calls() int {
	fb.mu.Lock()
	defer fb.mu.Unlock()
	return len(fb.made)
}

func (fb *fakeBackends) last() *fakeBackend {
	fb.mu.Lock()
	defer fb.mu.Unlock()
	return fb.made[len(fb.made)-1]
}

// fakeBackend is a scripted backend. A path's id is its own. The test's
// goroutine stands in for the backend's: send and fail call the handler
// themselves.
type fakeBackend struct {
	h    events.Handler
	caps decide.Caps

	mu      sync.Mutex
	ids     map[string]int // the id each path gets
	watches map[int]bool   // ids watched
	next    int
}

func (b *fakeBackend) idLocked(path string) int {
	id, ok := b.ids[path]
	if !ok {
		b.next++
		id = b.next
		b.ids[path] = id
	}
	return id
}

func (b *fakeBackend) Add(path string, _ decide.WatchKind) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	id := b.idLocked(path)
	b.watches[id] = true
	return id, nil
}

func (b *fakeBackend) Remove(id int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.watches, id)
}

func (b *fakeBackend) Caps() decide.Caps { return b.caps }

func (b *fakeBackend) Inode(int) (decide.WatchedInode, bool) { return decide.WatchedInode{}, false }
func (b *fakeBackend) Sync()                                 {}

func (b *fakeBackend) Close() error { return nil }

// watched lists the paths whose inode is watched, sorted.
func (b *fakeBackend) watched() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for p, id := range b.ids {
		if b.watches[id] {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// send reports an event on path, as the kernel does: on the watch of its
// directory, named, and on its own watch if it has one.
func (b *fakeBackend) send(path string, o decide.Op) {
	b.mu.Lock()
	var batch []events.RawEvent
	if id, ok := b.ids[path]; ok && b.watches[id] {
		batch = append(batch, events.RawEvent{ID: id, Op: o})
	}
	if id, ok := b.ids[filepath.Dir(path)]; ok && b.watches[id] {
		batch = append(batch, events.RawEvent{ID: id, Name: filepath.Base(path), Op: o})
	}
	b.mu.Unlock()
	if len(batch) > 0 {
		b.h.Events(batch)
	}
}

// fail breaks the backend.
func (b *fakeBackend) fail(err error) { b.h.Failed(err) }

// fakeChannels are the channels of a scripted notifier. Unless buffered,
// they are unbuffered, as a notifier without a hub's buffers would be: a
// send returns once the session has taken the event.
type fakeChannels struct {
	events chan decide.Event
	errors chan error
	closed chan struct{}

	mu           sync.Mutex
	isClosed     bool
	eventsClosed bool
}

func newFakeChannels(buffered bool) fakeChannels {
	size := 0
	if buffered {
		size = events.SubscriptionBuffer
	}
	return fakeChannels{events: make(chan decide.Event, size), errors: make(chan error), closed: make(chan struct{})}
}

func (c *fakeChannels) Events() <-chan decide.Event { return c.events }
func (c *fakeChannels) Errors() <-chan error        { return c.errors }

func (c *fakeChannels) markClosed() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.isClosed {
		c.isClosed = true
		close(c.closed)
	}
}

// closeEvents and closeErrors close a channel, as a broken notifier
// would.
func (c *fakeChannels) closeEvents() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.eventsClosed = true
	close(c.events)
}

func (c *fakeChannels) closeErrors() { close(c.errors) }

// deliver sends an event, as the kernel would; it reports false if the
// watcher or its event channel was closed first.
func (c *fakeChannels) deliver(ev decide.Event) bool {
	c.mu.Lock()
	gone := c.eventsClosed
	c.mu.Unlock()
	if gone {
		return false
	}
	select {
	case c.events <- ev:
		return true
	case <-c.closed:
		return false
	}
}

// fail delivers an error; it reports false if the watcher was closed first.
func (c *fakeChannels) fail(err error) bool {
	select {
	case c.errors <- err:
		return true
	case <-c.closed:
		return false
	}
}
