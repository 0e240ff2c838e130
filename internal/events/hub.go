package events

import (
	"errors"
	"github.com/keepwatch/file/internal/decide"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"unicode/utf8"
)

// SubscriptionBuffer is how many events a subscription holds for its
// loop. Its last slot is kept for an OpRescan event, so dispatch never
// blocks: a loop busy in a slow callback loses events, not the hub's time,
// and rescans.
const SubscriptionBuffer = 16

// errNotifierClosed is what Add says on a subscription that is closed or
// whose backend failed.
var errNotifierClosed = errors.New("keepwatch: notifier closed")

// ProcessHub is the hub every provider shares unless a test injects
// another notifier. The root package's tests make it a hub on fsnotify's
// backend where they are run with -backend=fsnotify.
var ProcessHub = NewHub(newDefaultBackend)

// Hub shares one backend, so one inotify instance, among every watch in the
// process. Linux allows 128 instances per user across all of that user's
// processes; one per provider would run out.
//
// The backend is created when the first subscription arrives and closed
// when the last one leaves. Watches are counted by the id the backend
// gives them, which on Linux is the kernel's watch descriptor, one per
// inode: a directory several providers need is watched once, one reached
// by two paths (a bind mount, a rename) serves both, and the kernel's watch
// goes only when no path of any subscription needs it.
//
// Each event goes only to the subscriptions that want the path it names
// (see Notifier.Want), and an event on a watched inode itself to those
// watching it: ten thousand files in one directory do not wake ten
// thousand loops for each change to one of them. A fault of the backend
// goes to every subscription, whose loops then re-arm, each with a full
// re-read; the first of them to come back makes the hub's next backend,
// once.
type Hub struct {
	newBackend func(Handler) (Backend, error)

	mu      sync.Mutex
	cur     *instance          // nil until needed, and after a fault
	watches map[int]*kwatch    // backend id → its paths and their users
	names   map[string]*wanted // path → the subscriptions wanting its events
	key     []byte             // dispatch's buffer for the names an event is looked up by
	bells   int                // subscriptions with a bell now: at most MaxBells
	// overflows counts the backends' reports that events were lost (a
	// queue overflowed: the kernel's, or fsnotify's): for the tests
	// (Overflows).
	overflows int
}

// MaxBells is how many of a hub's subscriptions at once have a Bell, a
// descriptor each: the loops of a process that watches a few files (most)
// wait on one, and a process that watches thousands spends no more than
// this many descriptors on them; the others' loops wait on their channels.
const MaxBells = 64

// kernelBackend is a backend that reads the kernel's events (inotify's,
// or fsnotify's), whose subscriptions' loops wait on bells. A test's fake
// backend is not: its loops wait on their channels, as testing/synctest
// needs of what it runs (a goroutine waiting in the runtime's poller is
// not one it can wait for).
type kernelBackend interface{ readsTheKernel() }

// kwatch is one watch of the backend: the paths it is known by, and the
// subscriptions that watch it under each.
type kwatch struct {
	paths map[string]map[*subscription]bool
}

// instance is one backend of the hub, and the subscriptions it serves: the
// hub makes a new one after a fault. It is the backend's handler: the
// backend's goroutines dispatch their events themselves, with no hand-off
// to another; h.mu serializes them. Its backend is closed when its last
// subscription leaves, whether it is the current instance or a failed one.
type instance struct {
	h    *Hub
	b    Backend
	subs map[*subscription]bool // guarded by h.mu
}

func (in *instance) Events(batch []RawEvent) bool { return in.h.dispatch(in, batch) }
func (in *instance) Failed(err error)             { in.h.fail(in, err) }

// NewHub returns a hub whose backend newBackend makes, when its first
// subscription comes, and again after a fault.
func NewHub(newBackend func(Handler) (Backend, error)) *Hub {
	return &Hub{newBackend: newBackend}
}

// Subscribe returns a notifier that shares the hub's backend. It is the
// notifier providers use by default (ProcessHub's).
func (h *Hub) Subscribe() (Notifier, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.cur == nil {
		in := &instance{h: h, subs: make(map[*subscription]bool)}
		b, err := h.newBackend(in)
		if err != nil {
			return nil, err
		}
		in.b = b
		h.cur = in
		h.watches = make(map[int]*kwatch)
		h.names = make(map[string]*wanted)
	}
	s := &subscription{
		h:      h,
		in:     h.cur,
		events: make(chan decide.Event, SubscriptionBuffer),
		errors: make(chan error, 1),
		paths:  make(map[string]int),
		want:   make(map[string]bool),
	}
	if _, real := h.cur.b.(kernelBackend); real && h.bells < MaxBells {
		if s.bell = NewBell(); s.bell != nil {
			h.bells++
		}
	}
	h.cur.subs[s] = true
	return s, nil
}

// dispatch hands each event on to the subscriptions that want it, rings
// the bell of each that got some, and reports whether one without a bell
// got some: a loop that waits on its channel, which the send readied.
func (h *Hub) dispatch(in *instance, batch []RawEvent) (readied bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.cur != in {
		return false
	}
	for _, ev := range batch {
		if ev.ID == EveryWatch {
			// Events were lost (name is empty), or the mount table changed
			// at the mount point name: every subscription, or those whose
			// paths go through it, must look again.
			if ev.Name == "" {
				h.overflows++
			}
			for s := range in.subs {
				if ev.Name == "" || s.throughLocked(ev.Name) {
					s.deliverLocked(decide.Event{Op: decide.OpRescan})
				}
			}
			continue
		}
		w := h.watches[ev.ID]
		if w == nil {
			continue // removed while the event was on its way
		}
		for path, users := range w.paths {
			if ev.Name == "" {
				h.selfEventLocked(path, ev.ID, users, ev.Op)
				continue
			}
			h.entryEventLocked(path, ev.Name, users, ev.Op)
		}
		if ev.Op&decide.OpDropped != 0 {
			h.droppedLocked(ev.ID)
		}
	}
	for s := range in.subs {
		if s.ring {
			s.ring = false
			s.bell.Ring() // once a batch, whatever it queued
			readied = readied || s.bell == nil
		}
	}
	return readied
}

// entryEventLocked hands an event on the entry name of the watched
// directory path to those of users that want it: by its own path, or as
// an entry of path. Most events in a watched directory are wanted by no
// one (a kubelet payload's files, an editor's temporary file, on the way
// to the one event that matters): the names are looked up from a buffer,
// and the event's path is made a string only when it is handed on.
func (h *Hub) entryEventLocked(path, name string, users map[*subscription]bool, o decide.Op) {
	h.key = append(append(h.key[:0], path...), filepath.Separator)
	every := h.names[string(h.key)] // those that want every entry of path
	h.key = appendJoin(h.key[:0], path, name)
	exact := h.names[string(h.key)]
	if exact == nil && every == nil {
		return
	}
	var full string
	if exact != nil {
		full = exact.path // the wanted name's own string: none to make
	} else {
		full = string(h.key)
	}
	exact.each(func(s *subscription) {
		if users[s] {
			s.deliverLocked(decide.Event{Name: full, Op: o})
		}
	})
	every.each(func(s *subscription) {
		if users[s] && !s.want[full] {
			s.deliverLocked(decide.Event{Name: full, Op: o})
		}
	})
}

// appendJoin appends filepath.Join(dir, name) to dst. For a clean dir and
// a name that is one element, as a backend reports it, that is dir, a
// separator unless dir is a root, and name: no string is made for it.
func appendJoin(dst []byte, dir, name string) []byte {
	if dir == "" || dir == "." || name == "" || name == "." || name == ".." ||
		strings.ContainsFunc(name, func(r rune) bool { return r < utf8.RuneSelf && os.IsPathSeparator(uint8(r)) }) ||
		filepath.Clean(dir) != dir {
		return append(dst, filepath.Join(dir, name)...)
	}
	dst = append(dst, dir...)
	if !os.IsPathSeparator(dir[len(dir)-1]) {
		dst = append(dst, filepath.Separator)
	}
	return append(dst, name...)
}

// selfEventLocked hands an event on the watched inode itself to those
// watching it under path, with the id of the watch it came on. That the
// kernel dropped the watch is, to them, that path went, and the inode
// with it: the kernel drops a watch when its inode is deleted, its last
// user done with it, or its filesystem unmounted, not when it is moved.
func (h *Hub) selfEventLocked(path string, id int, users map[*subscription]bool, o decide.Op) {
	if o&decide.OpDropped != 0 {
		o = o&^decide.OpDropped | decide.OpRemove | decide.OpGone
	}
	for s := range users {
		s.deliverLocked(decide.Event{Name: path, Op: o, Watch: id})
	}
}

// droppedLocked forgets a watch the kernel dropped (its inode deleted, its
// filesystem unmounted): the paths that used it must be watched afresh.
func (h *Hub) droppedLocked(id int) {
	for path, users := range h.watches[id].paths {
		for s := range users {
			if s.paths[path] == id {
				delete(s.paths, path)
			}
		}
	}
	delete(h.watches, id)
}

// fail ends an instance whose backend broke: every subscription gets the
// error and is cut loose, and the next subscription makes a new backend.
// It runs on the backend's goroutine, so it cannot close the backend; the
// last of its subscriptions to leave does.
func (h *Hub) fail(in *instance, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range in.subs {
		s.broken = true
		select {
		case s.errors <- err:
		default: // it has an error to read already
		}
		s.bell.Ring()
	}
	if h.cur == in {
		h.cur, h.watches, h.names = nil, nil, nil
	}
}

// leave removes a subscription. When it was the last of its instance,
// the instance's backend is closed: leave waits for its goroutine to
// exit, so that no goroutine outlives the last watch.
func (h *Hub) leave(s *subscription) {
	h.mu.Lock()
	in := s.in
	if h.cur == in && !s.broken {
		for path, id := range s.paths {
			h.releaseLocked(s, path, id)
		}
		for path := range s.want {
			h.unwantLocked(s, path)
		}
	}
	delete(in.subs, s)
	last := len(in.subs) == 0
	if last && h.cur == in {
		h.cur, h.watches, h.names = nil, nil, nil
	}
	h.mu.Unlock()
	if last {
		_ = in.b.Close()
	}
}

// useLocked records that s watches id under path.
func (h *Hub) useLocked(s *subscription, path string, id int) {
	w := h.watches[id]
	if w == nil {
		w = &kwatch{paths: make(map[string]map[*subscription]bool)}
		h.watches[id] = w
	}
	if w.paths[path] == nil {
		w.paths[path] = make(map[*subscription]bool)
	}
	w.paths[path][s] = true
}

// releaseLocked drops s's use of id under path, and the backend's watch
// when it was the last use.
func (h *Hub) releaseLocked(s *subscription, path string, id int) {
	w := h.watches[id]
	if w == nil {
		return
	}
	delete(w.paths[path], s)
	if len(w.paths[path]) == 0 {
		delete(w.paths, path)
	}
	if len(w.paths) == 0 {
		delete(h.watches, id)
		s.in.b.Remove(id)
	}
}

// unwantLocked drops s's wish for path's events.
func (h *Hub) unwantLocked(s *subscription, path string) {
	if w := h.names[path]; w != nil && w.drop(s) {
		delete(h.names, path)
	}
}

// subscription is one watch loop's share of the hub: a Notifier.
type subscription struct {
	h      *Hub
	in     *instance // the instance it belongs to
	events chan decide.Event
	errors chan error
	bell   *Bell // rung once a dispatch or a failure has put something in events or errors; nil without one

	// Guarded by h.mu.
	paths  map[string]int // watched path → the backend's id for it
	want   map[string]bool
	last   decide.Event // the event queued last: see deliverLocked
	prev   decide.Event // the event queued before it
	lost   bool         // an OpRescan event is queued and events since were dropped
	ring   bool         // events were queued in this dispatch: its bell is to ring at its end
	broken bool         // its instance failed; it only waits to be closed
	closed bool
}

// liveLocked reports whether s may still change the hub's state.
func (s *subscription) liveLocked() bool {
	return !s.closed && !s.broken && s.h.cur == s.in
}

// throughLocked reports whether any path s wants or watches is point or
// lies below it.
func (s *subscription) throughLocked(point string) bool {
	below := func(p string) bool {
		return p == point || strings.HasPrefix(p, point) && (strings.HasSuffix(point, "/") || p[len(point)] == '/')
	}
	for p := range s.want {
		if below(p) {
			return true
		}
	}
	for p := range s.paths {
		if below(p) {
			return true
		}
	}
	return false
}

// Add watches path. It asks the backend even if path is watched already:
// the path may name another inode now (a directory deleted and created
// again, a directory renamed over it), and the old watch is then released.
// Asking again for a live watch costs one cheap system call.
func (s *subscription) Add(path string, report decide.WatchKind) (int, error) {
	h := s.h
	h.mu.Lock()
	defer h.mu.Unlock()
	if !s.liveLocked() {
		return 0, errNotifierClosed
	}
	id, err := s.in.b.Add(path, report)
	if err != nil {
		return 0, err
	}
	if old, ok := s.paths[path]; ok {
		if old == id {
			return id, nil
		}
		h.releaseLocked(s, path, old)
	}
	s.paths[path] = id
	h.useLocked(s, path, id)
	return id, nil
}

// Remove stops watching path, for this subscription.
func (s *subscription) Remove(path string) {
	h := s.h
	h.mu.Lock()
	defer h.mu.Unlock()
	id, ok := s.paths[path]
	if !s.liveLocked() || !ok {
		return
	}
	delete(s.paths, path)
	h.releaseLocked(s, path, id)
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
	w := h.names[path]
	if w == nil {
		w = &wanted{path: path}
		h.names[path] = w
	}
	w.add(s)
}

// WantOnly drops the wanted paths not in keep.
func (s *subscription) WantOnly(keep map[string]bool) {
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

// Sync waits for the backend to hand on what the kernel queued until now;
// dispatch puts it in Events without blocking. It holds no lock of the hub
// while it waits: dispatch takes it.
func (s *subscription) Sync() {
	s.h.mu.Lock()
	live := s.liveLocked()
	s.h.mu.Unlock()
	if live {
		s.in.b.Sync()
	}
}

func (s *subscription) Caps() decide.Caps { return s.in.b.Caps() }

// Inode asks the backend which inode the watch id is of.
func (s *subscription) Inode(id int) (decide.WatchedInode, bool) {
	s.h.mu.Lock()
	live := s.liveLocked()
	s.h.mu.Unlock()
	if !live {
		return decide.WatchedInode{}, false
	}
	return s.in.b.Inode(id)
}

func (s *subscription) Events() <-chan decide.Event { return s.events }

func (s *subscription) Errors() <-chan error { return s.errors }

// Bell is rung once events or an error are put in s's channels (Belled):
// nil for a subscription beyond MaxBells.
func (s *subscription) Bell() *Bell { return s.bell }

// Close leaves the hub. It is idempotent.
func (s *subscription) Close() error {
	s.h.mu.Lock()
	if s.closed {
		s.h.mu.Unlock()
		return nil
	}
	s.closed = true
	if s.bell != nil {
		s.h.bells--
	}
	s.h.mu.Unlock()
	s.h.leave(s)
	s.bell.Close()
	return nil
}

// deliverLocked queues an event without blocking. An event the same as
// the one queued last, while that one is still unread, is merged into it,
// as the kernel merges the same event in its own queue: a burst of writes
// (a tool writing line by line) then fills no loop's queue, and loses it
// no writer's close. Where a file is watched by itself as well as through
// its directory, the kernel tells each change twice, on the directory's
// watch and then on the file's own (with its id), so that the copies
// alternate and neither is ever the one queued last: an event the same as
// the first of the two queued last, while both are unread and are one
// change told so, is merged into that pair.
//
// Opens and closes are never merged: the loop counts a file's openers by
// them (its own watch's), and one process's open merged into another's
// hides that process. The kernel merges two alike only until its reader
// has read the first; this queue is read once the loop is done with what it
// is doing, and its last event is often the loop's own read's open, unread
// while the read runs: a writer's open merged into it went uncounted. A
// close merged while its open was not would leave the count too high, and
// hold reads back for an opener no longer there. A burst of writes, the
// flood the merging is for, still merges.
func (s *subscription) deliverLocked(ev decide.Event) {
	const counted = decide.OpOpen | decide.OpCloseNoWrite | decide.OpClose
	if s.closed || ev.Op&counted == 0 && (len(s.events) > 0 && ev == s.last ||
		len(s.events) > 1 && ev == s.prev && s.prev.Op == s.last.Op && s.prev.Name == s.last.Name) {
		return
	}
	if len(s.events) < cap(s.events)-1 {
		s.events <- ev
		s.prev, s.last, s.lost, s.ring = s.last, ev, false, true
		return
	}
	if !s.lost {
		s.lost = true
		s.prev, s.last = s.last, decide.Event{Op: decide.OpRescan}
		s.events <- s.last // fits: the last slot is kept for it
		s.ring = true
	}
}

// wanted is the subscriptions that want the events of one path, and the
// path's string, which events handed to them are named by: most paths are
// wanted by one subscription, and a kubelet update wants two new ones, so
// one is kept without a map, and the name made once.
type wanted struct {
	path string
	one  *subscription
	more map[*subscription]bool // the others, if any
}

func (w *wanted) add(s *subscription) {
	switch {
	case w.one == nil || w.one == s:
		w.one = s
	default:
		if w.more == nil {
			w.more = make(map[*subscription]bool)
		}
		w.more[s] = true
	}
}

// drop removes s, and reports whether no subscription is left.
func (w *wanted) drop(s *subscription) bool {
	if w.one == s {
		w.one = nil
		for o := range w.more {
			w.one = o
			delete(w.more, o)
			break
		}
	} else {
		delete(w.more, s)
	}
	return w.one == nil
}

// each calls fn with each subscription, if w is not nil.
func (w *wanted) each(fn func(*subscription)) {
	if w == nil {
		return
	}
	if w.one != nil {
		fn(w.one)
	}
	for s := range w.more {
		fn(s)
	}
}
