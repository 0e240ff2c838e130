package file

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"
)

// core is what a File and a FileSet share: their target, and the state of
// their watch. Every change to that state is a method here, under mu.
type core struct {
	t    target
	opts options // t.opts points here

	// eventOf makes the event a delivery calls back with: File's is an
	// fsnotify.Event, FileSet's a SetEvent.
	eventOf func(c *content, op fsnotify.Op) any

	mu         sync.Mutex
	sv         *supervisor // the current watch, or the last one, stopped; nil if none
	seen       seenMark    // what the application last got, from a read or a callback
	delivering *content    // what the running callback was fired for, nil otherwise
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
	c.opts = newOptions(opts)
	c.t = target{path: path, subj: subj, opts: &c.opts}
	c.eventOf = eventOf
}

// read reads the subject for the application, unless a callback is
// running, whose content it returns instead: so that k.Load inside the
// callback loads what was judged to be new.
func (c *core) read() reading {
	if d := c.deliveringNow(); d != nil {
		return reading{c: *d}
	}
	r := c.t.subj.read("")
	c.markRead(r)
	return r
}

// watch starts a watch; see File.WatchWithContext.
func (c *core) watch(ctx context.Context, cb func(event any, err error)) error {
	if cb == nil {
		return errNilCallback
	}
	if c.isWatching() {
		return ErrAlreadyWatching
	}
	first := launchSession(c.t, reasonStart) // I/O outside the lock; checked again below
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sv != nil && !c.sv.stopped() {
		first.close()
		return ErrAlreadyWatching
	}
	if c.seen.state == seenNothing {
		// Nobody read the file before Watch: the content now is the baseline.
		c.seen = markOf(first.read)
	}
	// Stats must show the watch as it is when Watch returns.
	c.stats.mode, c.stats.dirs = ModeRetrying, nil
	if first.s != nil {
		c.stats.mode, c.stats.dirs = first.s.mode(), first.s.watchedDirs()
	}
	// The last watch may still be in a callback: the new one's first waits
	// for it, so that callbacks never overlap.
	c.sv = startSupervisor(ctx, c, cb, c.sv, first, c.seen)
	return nil
}

// recheck asks the running watch to look now; see File.Recheck. The
// request goes to the watch, not the provider: one made with no watch
// running, or to a watch that is stopping, is dropped rather than left for
// the next watch, which reads anyway when it starts.
func (c *core) recheck() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sv != nil && !c.sv.stopped() {
		c.sv.nudge()
	}
}

// isWatching reports whether a watch is running and not stopping.
func (c *core) isWatching() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sv != nil && !c.sv.stopped()
}

// unwatch stops the watch; see File.Unwatch. A callback decided on before
// it took the lock is about to be called: it waits for that, which runs no
// code of the application's, so that no callback begins after it returns.
func (c *core) unwatch() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sv != nil {
		c.sv.stop()
	}
	for c.handing > 0 {
		c.handed.Wait()
	}
}

// shutdown stops the watch and waits for it; see File.Shutdown.
func (c *core) shutdown(ctx context.Context) error {
	for {
		c.mu.Lock()
		sv := c.sv
		if sv != nil {
			sv.stop()
		}
		c.mu.Unlock()
		if sv == nil {
			return nil
		}
		select {
		case <-sv.done:
		case <-ctx.Done():
			return ctx.Err()
		}
		if c.clearWatch(sv) {
			return nil
		}
		// The callback it waited for started another watch: stop that too.
	}
}

// clearWatch clears c.sv if it is still sv, and reports whether it was.
func (c *core) clearWatch(sv *supervisor) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sv != sv {
		return false
	}
	c.sv = nil
	return true
}

// deliveringNow returns the content of the running callback, or nil.
func (c *core) deliveringNow() *content {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.delivering
}

// markRead records what a read gave the application: the baseline of the
// next watch, not of the one that runs.
func (c *core) markRead(r reading) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if r.err != nil && c.seen.state != seenNothing {
		return
	}
	c.seen = markOf(r)
}

// deliver calls cb with r's content and op, unless the watch has stopped
// (ctx is done), and reports whether it did. While cb runs, reads return
// that content.
func (c *core) deliver(ctx context.Context, cb func(any, error), r reading, op fsnotify.Op) bool {
	if !c.startDelivery(ctx, &r.c, r.why) {
		return false
	}
	defer c.endDelivery()
	ev := c.eventOf(&r.c, op)
	c.handOver()
	cb(ev, nil)
	if log := c.opts.log(); log.Enabled(context.Background(), slog.LevelDebug) {
		attrs := []any{slog.String("path", c.t.path), slog.String("reason", string(r.why)), slog.Int("size", r.c.size())}
		if r.c.gen != "" {
			attrs = append(attrs, slog.String("generation", r.c.gen))
		}
		// The keyed fingerprint, shortened: it tells versions apart in the
		// log, and lets no reader of the log test a guess at a Secret.
		attrs = append(attrs, slog.String("fingerprint", fingerprint(r.c.sum)[:12]))
		if c.opts.contentHash {
			attrs = append(attrs, slog.String("sha256", hex.EncodeToString(r.c.sum[:])))
		}
		log.Debug("keepwatch: update delivered", attrs...)
	}
	return true
}

// startDelivery marks content as what the application has seen and as
// what reads return, and counts the update, unless ctx is done. It checks
// ctx under c.mu, which Unwatch holds to stop the watch, and Unwatch waits
// until the callback is handed over: so no callback begins after Unwatch
// returns.
func (c *core) startDelivery(ctx context.Context, d *content, why reason) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ctx.Err() != nil {
		return false
	}
	c.seen = contentMark(d)
	c.delivering = d
	c.stats.updates++
	c.stats.lastUpdate, c.stats.lastUpdateReason = time.Now(), why
	c.handing++
	return true
}

// handOver says that a callback decided on is being called now.
func (c *core) handOver() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.handing--
	if c.handing == 0 {
		c.handed.Broadcast()
	}
}

// endDelivery ends what startDelivery began, once the callback returned.
func (c *core) endDelivery() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.delivering = nil
}

// report counts a problem and, with WithErrorCallbacks, calls cb with it,
// unless the watch has stopped.
func (c *core) report(ctx context.Context, cb func(any, error), err error) {
	if !c.recordError(ctx, err) {
		return
	}
	c.handOver()
	cb(nil, err)
}

// recordError counts a problem, unless ctx is done, checked under c.mu as
// startDelivery does; it reports whether the callback is to be told, and
// is then being handed over, as by startDelivery.
func (c *core) recordError(ctx context.Context, err error) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ctx.Err() != nil {
		return false
	}
	c.stats.errors++
	c.stats.lastError, c.stats.lastErrorTime = err, time.Now()
	if !c.opts.errorCallbacks {
		return false
	}
	c.handing++
	return true
}

// recordSession records that a session runs, how, and what it watches.
func (c *core) recordSession(mode Mode, dirs []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stats.mode, c.stats.dirs = mode, dirs
}

// recordDirs records what the running session watches now.
func (c *core) recordDirs(dirs []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stats.dirs = dirs
}

// recordFailure records that a session failed; mode is what follows, and
// restart whether it counts as a restart (trying events again while
// polling does not).
func (c *core) recordFailure(mode Mode, restart bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if restart {
		c.stats.restarts++
	}
	c.stats.mode, c.stats.dirs = mode, nil
}

// firstSubPathCheck reports whether this is the provider's first subPath
// check: the warning is given once per provider, not per Watch.
func (c *core) firstSubPathCheck() bool {
	return c.subPathChecked.CompareAndSwap(false, true)
}

// errorf wraps err as an *fs.PathError on the provider's path.
func (c *core) errorf(op string, err error) error {
	return &fs.PathError{Op: op, Path: c.t.path, Err: err}
}
