package file

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/keepwatch/file/internal/decide"
	"github.com/keepwatch/file/internal/filemount"
	"github.com/keepwatch/file/internal/mountinfo"
)

// core is what a File and a FileSet share: their target, and the state of
// their watch. Once init has made it, every change to that state is a
// method of core, under mu (but subPathChecked, an atomic flag of its own):
// here, and a single-file mount's in mount.go.
type core struct {
	t target

	// eventOf makes the event a delivery calls back with: File's is an
	// fsnotify.Event, FileSet's a SetEvent.
	eventOf func(c *content, op fsnotify.Op) any

	// missing says why the path does not resolve now, or nil: Watch
	// starts only on a path that does (see startable).
	missing func() error

	mu         sync.Mutex
	w          *delivery // the current watch, or the last one, stopped; nil if none
	seen       seenMark  // what the application last got: the watch's baseline, then each delivery
	delivering *content  // what the running callback was fired for, nil otherwise
	stats      stats
	handing    int        // callbacks decided on and not yet called
	handed     *sync.Cond // on mu: handing dropped to zero

	subPathChecked atomic.Bool // the single-file mount is looked for once per provider
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
	seenHeld                     // sum holds Watch's first read, which its decider held (a writer may have been in it)
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
	r := c.t.subj.read(decide.ReasonRequest, nil, false, false)
	c.markRead(r)
	return r
}

// watch starts a watch; see File.WatchWithContext. The first loop is
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
	first := launchLoop(c.t, w, decide.ReasonStart)
	c.takeBaseline(w, first.read, judgeAlone(c.t, first.read))
	go w.run(first)
	return nil
}

// newWatch makes the watch that Watch starts the current one, unless one
// runs. The last watch may still be in a callback: the new one's first
// waits for it, so that callbacks never overlap.
func (c *core) newWatch(parent context.Context, cb func(any, error)) (*delivery, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.w != nil && !c.w.stopped() {
		return nil, ErrAlreadyWatching
	}
	ctx, cancel := context.WithCancel(parent)
	w := &delivery{c: c, cb: cb, ctx: ctx, cancel: cancel, done: make(chan struct{}), look: make(chan struct{}, 1), prev: c.w}
	c.w = w
	c.stats.mode, c.stats.dirs = ModeRetrying, nil // until its first loop is open
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
		c.w.requestLook()
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
func (c *core) stopWatch() *delivery {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.w != nil {
		c.w.stop()
	}
	return c.w
}

// clearWatch clears c.w if it is still w, and reports whether it was.
func (c *core) clearWatch(w *delivery) bool {
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

// The provider's side of a delivery, under its lock. Each checks first
// that the watch asking is still the running one: Unwatch holds the lock to
// stop the watch, then waits until a callback decided on is handed over, so
// no callback begins after Unwatch returns, and a stopped watch's last
// loop records nothing over its successor's.

// takeBaseline makes r, judged f by a decider, the baseline if nobody
// read the file before Watch: then what Watch found is what the
// application is taken to have. Watch takes its first read so, judged by
// a decider of its own (judgeAlone); a read that failed for a reason of
// the process leaves it to the next. A read the decider held (a writer
// may have been in it) is a baseline only if the watch's loop accepts the
// same content: other content is news (admit). It reports whether r was
// content, and so is not delivered.
func (c *core) takeBaseline(w *delivery, r reading, f decide.Forward) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen.state != seenNothing || w.stopped() || f == decide.ForwardFailure {
		return false
	}
	c.seen = markOf(r)
	if f == decide.ForwardNothing && r.err == nil {
		c.seen.state = seenHeld
	}
	return r.err == nil
}

// admit decides whether d goes to the callback: it does if the watch still
// runs and d is news to the application, or the file is back after a
// problem. If so it marks d as what the application has seen and what reads
// return, counts the update, and returns the event's op.
func (c *core) admit(w *delivery, d *content, why Reason, back bool) (fsnotify.Op, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if w.stopped() {
		return 0, false
	}
	held := c.seen.state == seenHeld
	if c.seen.state == seenNothing || held && c.seen.sum == d.sum {
		c.seen = contentMark(d) // the baseline: see takeBaseline
		return 0, false
	}
	if !back && c.seen.state == seenContent && c.seen.sum == d.sum {
		return 0, false
	}
	op := fsnotify.Write
	if back || c.seen.state != seenContent && !held {
		op = fsnotify.Create
	}
	c.seen = contentMark(d)
	c.delivering = d
	c.stats.updates++
	c.stats.lastUpdate, c.stats.lastUpdateReason = time.Now(), why
	c.handing++
	return op, true
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

// endDelivery ends what admit began, once the callback returned.
func (c *core) endDelivery() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.delivering = nil
}

// recordError counts a problem, unless the watch has stopped; it reports
// whether the callback is to be told, and is then being handed over, as by
// admit.
func (c *core) recordError(w *delivery, err error) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if w.stopped() {
		return false
	}
	c.stats.errors++
	c.stats.lastError, c.stats.lastErrorTime = err, time.Now()
	if !c.t.opts.errorCallbacks {
		return false
	}
	c.handing++
	return true
}

// recordWatching records how the running loop watches.
func (c *core) recordWatching(w *delivery, mode Mode, dirs []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if w.stopped() {
		return
	}
	c.stats.mode, c.stats.dirs = mode, dirs
}

// recordFailure records that a loop failed; mode is what follows, and
// restart whether it counts as a restart.
func (c *core) recordFailure(w *delivery, mode Mode, restart bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if w.stopped() {
		return
	}
	if restart {
		c.stats.restarts++
	}
	c.stats.mode, c.stats.dirs = mode, nil
}

// watchedDirs returns the directories recorded as watched.
func (c *core) watchedDirs() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stats.dirs
}

// logDelivery logs a delivery at debug level: why the content was read, its
// size and generation, and the keyed fingerprint, shortened: it tells
// versions apart in the log, and lets no reader of the log test a guess at
// a Secret.
func (c *core) logDelivery(r reading) {
	log := c.t.opts.log()
	if !log.Enabled(context.Background(), slog.LevelDebug) {
		return
	}
	attrs := []any{slog.String("path", c.t.path), slog.String("reason", string(r.why)), slog.Int("size", r.c.size())}
	if r.c.gen != "" {
		attrs = append(attrs, slog.String("generation", r.c.gen))
	}
	attrs = append(attrs, slog.String("fingerprint", fingerprint(r.c.sum)[:12]))
	if c.t.opts.contentHash {
		attrs = append(attrs, slog.String("sha256", hex.EncodeToString(r.c.sum[:])))
	}
	log.Debug("keepwatch: update delivered", attrs...)
}

// snapshot returns the Stats of a provider. The fingerprint, an HMAC, is
// computed after the lock is released.
func (c *core) snapshot() Stats {
	s, seen := c.state()
	if seen.state == seenContent {
		s.Size, s.ModTime, s.Generation = seen.got.size, seen.got.modTime, seen.got.gen
		s.Fingerprint = fingerprint(seen.sum)
		if c.t.opts.contentHash {
			s.SHA256 = hex.EncodeToString(seen.sum[:])
		}
	}
	return s
}

// state copies the watch's state, and what the application last got.
func (c *core) state() (Stats, seenMark) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.stats
	s := Stats{
		Path:             c.t.path,
		Mode:             ModeStopped,
		Updates:          st.updates,
		Restarts:         st.restarts,
		Errors:           st.errors,
		LastUpdate:       st.lastUpdate,
		LastUpdateReason: st.lastUpdateReason,
		LastError:        st.lastError,
		LastErrorTime:    st.lastErrorTime,
		LastRead:         later(st.lastRead, st.lastUpdate), // a delivery is a read, recorded as it is made
		SubPath:          st.subPath,
		SourceReplaced:   st.mount.state == filemount.Replaced,
	}
	s.LastCheck = later(s.LastRead, st.lastCheck)
	if c.w != nil && !c.w.stopped() {
		s.Mode = st.mode
		s.WatchedDirs = slices.Clone(st.dirs)
	}
	return s, c.seen
}

// recordRead records that the running watch took a read of the file.
func (c *core) recordRead(w *delivery) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !w.stopped() {
		c.stats.lastRead = time.Now()
	}
}

// recordCheck records that the running watch re-checked the file and
// found it unchanged.
func (c *core) recordCheck(w *delivery) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !w.stopped() {
		c.stats.lastCheck = time.Now()
	}
}

// startable returns why Watch cannot start now: a watch runs, or the path
// does not resolve. The stock provider checks in the same order. Watch
// starts only on a path that resolves, as koanf's stock provider's does:
// code written for it asks Watch whether the file is there (a test that
// removes the file and expects an error, a service that must not run
// without its config). Once a watch has started, it never ends on its own:
// a path that goes away later is waited for. [WithWaitForPath] waives the
// check, for a service started before its file exists.
func (c *core) startable() error {
	c.mu.Lock()
	running := c.w != nil && !c.w.stopped()
	c.mu.Unlock()
	switch {
	case running:
		return ErrAlreadyWatching
	case c.t.opts.waitForPath:
		return nil
	}
	return c.missing()
}

// recordSubPath records that the file is a single file mounted on its own,
// by the mount m: where, from what source, and its ID.
func (c *core) recordSubPath(m mountinfo.Mount) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stats.subPath = true
	c.stats.mount.point, c.stats.mount.source, c.stats.mount.id = m.Point, filemount.Source(m.Root), m.ID
}

// knownMount returns what the watch found of the single file mounted at
// the path.
func (c *core) knownMount() mountState {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stats.mount
}

// fileMounted reports whether the watch found a single file mounted at the
// path.
func (c *core) fileMounted() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stats.subPath
}

// sourceReplaced reports whether the mount's source is replaced now.
func (c *core) sourceReplaced() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stats.mount.state == filemount.Replaced
}

// recordMount records the state the running watch judged the mount to
// be in, and returns what was recorded before; ok is false, and nothing is
// recorded, if the watch has stopped.
func (c *core) recordMount(w *delivery, now filemount.State) (was mountState, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if w.stopped() {
		return mountState{}, false
	}
	was = c.stats.mount
	c.stats.mount.state = now
	return was, true
}
