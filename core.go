package file

import (
	"context"
	"crypto/sha256"
	"io/fs"
	"sync"
	"sync/atomic"

	"github.com/fsnotify/fsnotify"
)

// core is what a File and a FileSet share: their target, and the state of
// their watch. Every change to that state is a method here or in
// delivery.go, under mu.
type core struct {
	t target

	// eventOf makes the event a delivery calls back with: File's is an
	// fsnotify.Event, FileSet's a SetEvent.
	eventOf func(c *content, op fsnotify.Op) any

	// missing says why the path does not resolve now, or nil: Watch
	// starts only on a path that does (see resolves.go).
	missing func() error

	mu         sync.Mutex
	w          *watch   // the current watch, or the last one, stopped; nil if none
	seen       seenMark // what the application last got: the watch's baseline, then each delivery
	delivering *content // what the running callback was fired for, nil otherwise
	stats      stats
	handing    int        // callbacks decided on and not yet called
	handed     *sync.Cond // on mu: handing dropped to zero

	subPathChecked atomic.Bool // the subPath warning is given once per provider
}

// seenMark records content the application got, so that a watch fires
// only for content it has not seen.
type seenMark struct {
	state seenState
	sum   [sha256.Size]byte
	got   got // what Stats tell of it
}

type seenState uint8

const (
	seenNothing seenState = iota // never read: the first watch read is the baseline
	seenFailed                   // read, but never successfully
	seenContent                  // sum holds the content last read or delivered
)

func markOf(r reading) seenMark {
	if r.err != nil {
		return seenMark{state: seenFailed}
	}
	return contentMark(&r.c)
}

func contentMark(d *content) seenMark {
	return seenMark{state: seenContent, sum: d.sum, got: gotOf(d)}
}

func (c *core) init(path string, subj subject, opts []Option, eventOf func(*content, fsnotify.Op) any) {
	c.handed = sync.NewCond(&c.mu)
	o := newOptions(opts)
	c.t = target{path: path, subj: subj, opts: &o}
	c.eventOf = eventOf
}

// read reads the subject for the application, unless a callback is
// running, whose content it returns instead: so that k.Load inside the
// callback loads what was judged to be new.
func (c *core) read() reading {
	if d := c.deliveringNow(); d != nil {
		return reading{c: *d}
	}
	r := c.t.subj.read("", nil)
	c.markRead(r)
	return r
}

// watch starts a watch; see File.WatchWithContext. The first session is
// launched before it returns, so that the watch is in place then.
func (c *core) watch(ctx context.Context, cb func(event any, err error)) error {
	if cb == nil {
		return errNilCallback
	}
	if err := c.startable(); err != nil {
		return err
	}
	w, err := c.newWatch(ctx, cb)
	if err != nil {
		return err
	}
	first := launchSession(c.t, w, ReasonStart)
	c.takeBaseline(w, first.read)
	go w.run(first)
	return nil
}

// newWatch makes the watch that Watch starts the current one, unless one
// runs. The last watch may still be in a callback: the new one's first
// waits for it, so that callbacks never overlap.
func (c *core) newWatch(parent context.Context, cb func(any, error)) (*watch, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.w != nil && !c.w.stopped() {
		return nil, ErrAlreadyWatching
	}
	ctx, cancel := context.WithCancel(parent)
	w := &watch{c: c, cb: cb, ctx: ctx, cancel: cancel, done: make(chan struct{}), look: make(chan struct{}, 1), prev: c.w}
	c.w = w
	c.stats.mode, c.stats.dirs = ModeRetrying, nil // until its first session is open
	return w, nil
}

// recheck asks the running watch to look now; see File.Recheck. The
// request goes to the watch, not the provider: one made with no watch
// running, or to a watch that is stopping, is dropped rather than left for
// the next watch, which reads anyway when it starts.
func (c *core) recheck() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.w != nil && !c.w.stopped() {
		c.w.nudge()
	}
}

// unwatch stops the watch; see File.Unwatch. A callback decided on before
// it took the lock is about to be called: it waits for that, which runs no
// code of the application's, so that no callback begins after it returns.
func (c *core) unwatch() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.w != nil {
		c.w.stop()
	}
	for c.handing > 0 {
		c.handed.Wait()
	}
}

// shutdown stops the watch and waits for it; see File.Shutdown.
func (c *core) shutdown(ctx context.Context) error {
	for {
		w := c.stopWatch()
		if w == nil {
			return nil
		}
		select {
		case <-w.done:
		case <-ctx.Done():
			return ctx.Err()
		}
		if c.clearWatch(w) {
			return nil
		}
		// The callback it waited for started another watch: stop that too.
	}
}

// stopWatch stops the current watch, if any, and returns it.
func (c *core) stopWatch() *watch {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.w != nil {
		c.w.stop()
	}
	return c.w
}

// clearWatch clears c.w if it is still w, and reports whether it was.
func (c *core) clearWatch(w *watch) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.w != w {
		return false
	}
	c.w = nil
	return true
}

// deliveringNow returns the content of the running callback, or nil.
func (c *core) deliveringNow() *content {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.delivering
}

// markRead records what a read made while no watch runs gave the
// application: the baseline of the next watch. A read while a watch runs
// (a health check, a second k.Load) changes nothing of what the watch
// delivers.
func (c *core) markRead(r reading) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.w != nil && !c.w.stopped() {
		return
	}
	if r.err != nil && c.seen.state != seenNothing {
		return
	}
	c.seen = markOf(r)
}

// errorf wraps err as an *fs.PathError on the provider's path.
func (c *core) errorf(op string, err error) error {
	return &fs.PathError{Op: op, Path: c.t.path, Err: err}
}
