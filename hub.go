package file

import (
	"path/filepath"
	"slices"
	"sync"

	"github.com/fsnotify/fsnotify"
)

// subBuffer is how many events a subscription holds for its session. Its
// last slot is kept for the opLost event, so dispatch never blocks: a
// session busy in a slow callback loses events, not the hub's time, and
// rescans.
const subBuffer = 16

// processHub is the hub every provider shares unless a test injects
// another notifier.
var processHub = newHub(newFsnotifyBackend)

// hub shares one backend, so one inotify instance, among every watch in the
// process. Linux allows 128 instances per user across all of that user's
// processes; one per provider would run out.
//
// The backend is created when the first subscription arrives and closed
// when the last one leaves. Directory watches are counted, so a directory
// that several providers need is watched once. The hub's reader dispatches
// each event only to the subscriptions that want the path it names (see
// notifier.Want), and events on a watched directory itself to those
// watching it: ten thousand files in one directory do not wake ten thousand
// sessions for each change to one of them. A fault of the backend (an
// error, an overflow, a closed channel) goes to every subscription, whose
// sessions then re-arm, each with a full re-read; the first of them to come
// back makes the hub's next backend, once.
type hub struct {
	newBackend func() (backend, error)

	mu     sync.Mutex
	cur    *generation                       // nil until needed, and after a fault
	failed []*generation                     // failed generations whose reader may still run
	dirs   map[string]map[*subscription]bool // directory → subscriptions watching it
	names  map[string]map[*subscription]bool // path → subscriptions wanting its events
	subs   map[*subscription]bool            // subscriptions of cur
}

// generation is one backend of the hub and its reader goroutine.
type generation struct {
	b    backend
	stop chan struct{} // closed to end the reader
	done chan struct{} // closed when the reader has exited
}

func newHub(newBackend func() (backend, error)) *hub {
	return &hub{newBackend: newBackend}
}

// subscribe returns a notifier that shares the hub's backend. It is the
// notifier providers use by default.
func (h *hub) subscribe() (notifier, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.cur == nil {
		b, err := h.newBackend()
		if err != nil {
			return nil, err
		}
		h.cur = &generation{b: b, stop: make(chan struct{}), done: make(chan struct{})}
		h.dirs = make(map[string]map[*subscription]bool)
		h.names = make(map[string]map[*subscription]bool)
		h.subs = make(map[*subscription]bool)
		go h.read(h.cur)
	}
	s := &subscription{
		h:      h,
		g:      h.cur,
		events: make(chan event, subBuffer),
		errors: make(chan error, 1),
		dirs:   make(map[string]bool),
		want:   make(map[string]bool),
	}
	h.subs[s] = true
	return s, nil
}

// read dispatches one generation's events until its backend fails or is
// closed.
func (h *hub) read(g *generation) {
	defer close(g.done)
	for {
		select {
		case <-g.stop:
			return
		case ev, ok := <-g.b.Events():
			if !ok {
				h.fail(g, errEventsClosed)
				return
			}
			h.dispatch(g, ev)
		case err, ok := <-g.b.Errors():
			if !ok {
				err = errErrorsClosed
			}
			h.fail(g, err)
			return
		}
	}
}

// dispatch hands an event to the subscriptions that want the path it
// names, and, for an event on a watched directory itself, to those
// watching it.
func (h *hub) dispatch(g *generation, fev fsnotify.Event) {
	ev := event{name: filepath.Clean(fev.Name), op: opOf(fev.Op)}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.cur != g {
		return
	}
	for s := range h.names[ev.name] {
		s.deliverLocked(ev)
	}
	for s := range h.dirs[ev.name] {
		if !s.want[ev.name] {
			s.deliverLocked(ev)
		}
	}
}

// fail ends a generation whose backend broke: every subscription gets the
// error and is cut loose, and the next subscription makes a new backend.
// A generation that was closed on purpose is not current any more, and
// ends quietly.
func (h *hub) fail(g *generation, err error) {
	h.mu.Lock()
	if h.cur != g {
		h.mu.Unlock()
		return
	}
	for s := range h.subs {
		s.broken = true
		select {
		case s.errors <- err:
		default: // it has an error to read already
		}
	}
	h.cur, h.dirs, h.names, h.subs = nil, nil, nil, nil
	h.failed = append(slices.DeleteFunc(h.failed, exited), g)
	h.mu.Unlock()
	// The reader is this goroutine; a backend's Close waits only for its own.
	_ = g.b.Close()
}

func exited(g *generation) bool {
	select {
	case <-g.done:
		return true
	default:
		return false
	}
}

// leave removes a subscription. When it was the last one, the backend is
// closed, and leave waits for every reader goroutine to exit, so that no
// goroutine outlives the last watch.
func (h *hub) leave(s *subscription) {
	h.mu.Lock()
	if s.broken || h.cur != s.g {
		h.mu.Unlock()
		return
	}
	for dir := range s.dirs {
		h.releaseLocked(s, dir)
	}
	for path := range s.want {
		h.unwantLocked(s, path)
	}
	delete(h.subs, s)
	if len(h.subs) > 0 {
		h.mu.Unlock()
		return
	}
	last, failed := h.cur, h.failed
	h.cur, h.dirs, h.names, h.subs, h.failed = nil, nil, nil, nil, nil
	h.mu.Unlock()

	close(last.stop)
	_ = last.b.Close()
	<-last.done
	for _, g := range failed {
		<-g.done
	}
}

// releaseLocked drops s's reference to dir, and the watch when it was the
// last.
func (h *hub) releaseLocked(s *subscription, dir string) {
	subs := h.dirs[dir]
	delete(subs, s)
	if len(subs) == 0 {
		delete(h.dirs, dir)
		h.cur.b.Remove(dir)
	}
}

// unwantLocked drops s's wish for path's events.
func (h *hub) unwantLocked(s *subscription, path string) {
	subs := h.names[path]
	delete(subs, s)
	if len(subs) == 0 {
		delete(h.names, path)
	}
}

// subscription is one session's share of the hub: a notifier.
type subscription struct {
	h      *hub
	g      *generation // the generation it belongs to
	events chan event
	errors chan error

	// Guarded by h.mu.
	dirs   map[string]bool
	want   map[string]bool
	lost   bool // an opLost event is queued and events since were dropped
	broken bool // its generation failed; it only waits to be closed
	closed bool
}

// liveLocked reports whether s may still change the hub's state.
func (s *subscription) liveLocked() bool {
	return !s.closed && !s.broken && s.h.cur == s.g
}

// Add watches dir. It adds the watch to the kernel even if another
// subscription has it: a directory deleted and created again needs a new
// watch, and re-adding a live one costs one cheap system call.
func (s *subscription) Add(dir string) error {
	h := s.h
	h.mu.Lock()
	defer h.mu.Unlock()
	if !s.liveLocked() {
		return fsnotify.ErrClosed
	}
	if err := s.g.b.Add(dir); err != nil {
		return err
	}
	if !s.dirs[dir] {
		s.dirs[dir] = true
		if h.dirs[dir] == nil {
			h.dirs[dir] = make(map[*subscription]bool)
		}
		h.dirs[dir][s] = true
	}
	return nil
}

// Remove stops watching dir, for this subscription.
func (s *subscription) Remove(dir string) {
	h := s.h
	h.mu.Lock()
	defer h.mu.Unlock()
	if !s.liveLocked() || !s.dirs[dir] {
		return
	}
	delete(s.dirs, dir)
	h.releaseLocked(s, dir)
}

// Want asks for the events that name path.
func (s *subscription) Want(path string) {
	h := s.h
	h.mu.Lock()
	defer h.mu.Unlock()
	if !s.liveLocked() || s.want[path] {
		return
	}
	s.want[path] = true
	if h.names[path] == nil {
		h.names[path] = make(map[*subscription]bool)
	}
	h.names[path][s] = true
}

// Forget drops the wanted paths not in keep.
func (s *subscription) Forget(keep map[string]bool) {
	h := s.h
	h.mu.Lock()
	defer h.mu.Unlock()
	if !s.liveLocked() {
		return
	}
	for path := range s.want {
		if !keep[path] {
			delete(s.want, path)
			h.unwantLocked(s, path)
		}
	}
}

func (s *subscription) Events() <-chan event { return s.events }
func (s *subscription) Errors() <-chan error { return s.errors }

// Close leaves the hub. It is idempotent.
func (s *subscription) Close() error {
	s.h.mu.Lock()
	if s.closed {
		s.h.mu.Unlock()
		return nil
	}
	s.closed = true
	s.h.mu.Unlock()
	s.h.leave(s)
	return nil
}

// deliverLocked queues an event without blocking.
func (s *subscription) deliverLocked(ev event) {
	if s.closed {
		return
	}
	if len(s.events) < cap(s.events)-1 {
		s.events <- ev
		s.lost = false
		return
	}
	if !s.lost {
		s.lost = true
		s.events <- event{op: opLost} // fits: the last slot is kept for it
	}
}
