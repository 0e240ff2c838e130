package file

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"runtime"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"
)

// watch is one call to Watch: a supervisor goroutine that runs watch
// sessions one after another, with a backoff between them, until it is
// stopped. Whatever ends a session (the notifier cannot be created, an Add
// fails, an error or overflow arrives, a channel closes) is reported once and
// followed by a new session, which re-reads the file: an update made while
// the watch was down is delivered then.
type watch struct {
	f      *File
	cb     func(event any, err error)
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{} // closed when the goroutine has exited
	goid   atomic.Uint64 // the goroutine's id, so Unwatch can tell it calls from a callback
	prev   *watch        // a stopped watch that may still be in its last callback; guarded by f.mu

	// Owned by the watch goroutine.
	fileProblem  string // text of the file problem last reported; "" when the file reads fine
	watchProblem string // text of the watch failure last reported; "" once re-armed
	remoteNoted  string // the event-less filesystem already reported
	failures     int    // sessions failed in a row
	fellBack     bool   // polling because events failed; retrying them is no restart
}

func startWatch(parent context.Context, f *File, cb func(any, error), prev *watch, first attempt) *watch {
	ctx, cancel := context.WithCancel(parent)
	w := &watch{f: f, cb: cb, ctx: ctx, cancel: cancel, done: make(chan struct{}), prev: prev}
	go w.run(first)
	return w
}

func (w *watch) stop()         { w.cancel() }
func (w *watch) stopped() bool { return w.ctx.Err() != nil }

// runsOnCaller reports whether the caller runs on this watch's goroutine or
// on that of a watch it waits for, that is, inside a callback: such a caller
// must not wait for the watch to end. Called with f.mu held.
func (w *watch) runsOnCaller() bool {
	id := goid()
	for x := w; x != nil; x = x.prev {
		if x.goid.Load() == id {
			return true
		}
	}
	return false
}

// attempt is one try at arming a session, and the read that followed it.
type attempt struct {
	s    *session // nil if arming failed
	err  error    // why arming failed
	c    content
	rerr error
}

// arm tries to arm a session and then reads the file. Watch calls it before
// returning, so that every change after Watch returns is either in this read
// or reported by an event; the supervisor calls it for each restart.
func arm(f *File) attempt {
	if f.opts.poll > 0 {
		return pollAttempt(f, false)
	}
	var a attempt
	a.s, a.err = openSession(f)
	a.c, a.rerr = readFile(f.abs, f.path, f.opts.maxSize)
	return a
}

// pollAttempt makes a polling session; it never fails. With retry it ends
// after eventRetryInterval, so that events are tried again.
func pollAttempt(f *File, retry bool) attempt {
	s := newSession(f, noEvents{})
	s.polling = true
	if retry {
		s.retry = time.NewTimer(eventRetryInterval)
	}
	_ = s.arm(false) // resolves the chain; noEvents cannot fail
	c, rerr := readFile(f.abs, f.path, f.opts.maxSize)
	return attempt{s: s, c: c, rerr: rerr}
}

func (a attempt) close() {
	if a.s != nil {
		a.s.close()
	}
}

func (w *watch) run(a attempt) {
	defer close(w.done)
	w.goid.Store(goid())
	w.awaitPrev()
	w.checkSubPath()

	bo := backoff{min: w.f.opts.backoffMin, max: w.f.opts.backoffMax}
	why := reasonStart
	for {
		if w.stopped() {
			a.close()
			return
		}
		start := time.Now()
		err := w.use(a, why)
		if w.stopped() {
			return
		}
		why = reasonRestart
		switch {
		case errors.Is(err, errRetryEvents):
			a = arm(w.f)
			continue
		case eventsUnavailable(err):
			// Retrying at once would fail again: poll, and try events
			// again later. Polling is its own wait; no backoff.
			w.failed(ModePolling)
			w.reportWatch(&watchError{cause: err, polling: w.f.opts.pollInterval()}, 0)
			a = pollAttempt(w.f, true)
			continue
		}
		if time.Since(start) >= bo.max {
			bo.reset() // a healthy run: this failure is a new one
		}
		delay := bo.next()
		w.failed(ModeRetrying)
		w.reportWatch(&watchError{cause: err}, delay)
		if !w.sleep(delay) {
			return
		}
		a = arm(w.f)
	}
}

// use delivers the attempt's read and runs its session until it ends. With
// no session it only delivers the read, so updates still flow, at the pace
// of the backoff, while no watch can be armed.
func (w *watch) use(a attempt, why reason) error {
	if a.s == nil {
		w.deliver(why, a.c, a.rerr)
		return a.err
	}
	defer a.s.close()
	w.armed(a.s)
	return a.s.run(w, why, a.c, a.rerr)
}

// awaitPrev waits until the previous watch has finished its last callback,
// so that callbacks never overlap, even when the callback itself calls
// Unwatch and then Watch.
func (w *watch) awaitPrev() {
	w.f.mu.Lock()
	prev := w.prev
	w.f.mu.Unlock()
	if prev == nil {
		return
	}
	<-prev.done
	w.f.mu.Lock()
	w.prev = nil
	w.f.mu.Unlock()
}

func (w *watch) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-w.ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// reportWatch reports a problem with the watch itself, unless it is the
// same one as the last reported and nothing healthy happened in between:
// then it only logs the retry, at debug level.
func (w *watch) reportWatch(we *watchError, retryIn time.Duration) {
	err := w.f.errorf("watch", we)
	again := err.Error() == w.watchProblem
	level := slog.LevelWarn
	if again {
		level = slog.LevelDebug
	}
	log := w.f.opts.log()
	ctx := context.Background()
	path := slog.String("path", w.f.path)
	switch {
	case we.fs != "":
		log.Log(ctx, level, "keepwatch: no events on this filesystem, polling", path,
			slog.String("fs", we.fs), slog.Duration("every", we.polling))
	case we.polling > 0:
		log.Log(ctx, level, "keepwatch: events unavailable, polling", path,
			slog.Any("error", we.cause), slog.Duration("every", we.polling))
	default:
		log.Log(ctx, level, "keepwatch: watch interrupted", path,
			slog.Any("error", we.cause), slog.Int("attempt", w.failures), slog.Duration("retry_in", retryIn))
	}
	if again {
		return
	}
	w.watchProblem = err.Error()
	w.emitError(err)
}

// failed counts a session that ended in failure; mode is what follows.
func (w *watch) failed(mode Mode) {
	w.failures++
	again := w.fellBack && mode == ModePolling
	w.fellBack = mode == ModePolling
	w.f.record(func(st *stats) {
		if !again {
			st.restarts++
		}
		st.mode, st.dirs = mode, nil
	})
}

// armed records that a session is running, and says how it watches.
func (w *watch) armed(s *session) {
	w.f.record(func(st *stats) { st.mode = s.mode() })
	log := w.f.opts.log().With(slog.String("path", w.f.path))
	switch {
	case s.polling && w.f.opts.poll > 0:
		log.Debug("keepwatch: polling", slog.Duration("every", w.f.opts.poll))
		return
	case s.polling:
		return // a fallback, reported as such
	case w.failures > 0:
		log.Info("keepwatch: watch re-armed", slog.Int("attempts", w.failures), slog.Any("dirs", s.chain.dirs))
	default:
		log.Info("keepwatch: watch started", slog.Any("dirs", s.chain.dirs))
	}
	w.failures, w.fellBack = 0, false
	w.watchProblem = ""
	if s.remote != "" && s.remote != w.remoteNoted {
		w.remoteNoted = s.remote
		w.reportWatch(&watchError{polling: w.f.opts.pollInterval(), fs: s.remote}, 0)
	}
}

func (w *watch) emitError(err error) {
	if w.stopped() {
		return
	}
	w.f.record(func(st *stats) {
		st.errors++
		st.lastError, st.lastErrorTime = err, time.Now()
	})
	w.cb(nil, err)
}

// backoff yields exponentially growing, jittered delays from about min up to
// max. Half of each delay is fixed and half random ("equal jitter"): many
// providers broken by one fault spread their retries, and none retries
// sooner than half its step.
type backoff struct {
	min, max time.Duration
	n        int
	rand     func(n int64) int64 // rand.Int64N; tests replace it
}

func (b *backoff) next() time.Duration {
	d := b.min
	for i := 0; i < b.n && d < b.max; i++ {
		d *= 2
	}
	d = min(d, b.max)
	if d < b.max {
		b.n++
	}
	rnd := b.rand
	if rnd == nil {
		rnd = rand.Int64N
	}
	half := d / 2
	return half + time.Duration(rnd(int64(d-half)+1))
}

func (b *backoff) reset() { b.n = 0 }

// goid returns the id of the calling goroutine, read from the header of its
// stack trace ("goroutine 42 [running]:"), as golang.org/x/net/http2 does.
// Go offers no other way to tell that Unwatch is called from inside the
// callback, where waiting for the watch goroutine would wait for itself.
// It costs about a microsecond and runs once per Watch and per Unwatch.
func goid() uint64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	b = bytes.TrimPrefix(b, []byte("goroutine "))
	if i := bytes.IndexByte(b, ' '); i > 0 {
		if id, err := strconv.ParseUint(string(b[:i]), 10, 64); err == nil {
			return id
		}
	}
	return 0
}

// watchError is a problem with the watch itself, as reported to the
// callback (inside an *fs.PathError naming the path).
type watchError struct {
	cause   error         // what broke; nil for a filesystem without events
	polling time.Duration // > 0: polling at this interval meanwhile
	fs      string        // the filesystem that delivers no events
}

func (e *watchError) Error() string {
	switch {
	case e.fs != "":
		return fmt.Sprintf("keepwatch: polling every %s: %s delivers no events for changes made elsewhere", e.polling, e.fs)
	case e.polling > 0:
		return fmt.Sprintf("keepwatch: watch interrupted, polling every %s: %v", e.polling, e.cause)
	}
	return fmt.Sprintf("keepwatch: watch interrupted: %v", e.cause)
}

// Is makes the error match ErrWatchInterrupted when events broke and
// ErrPolling while polling.
func (e *watchError) Is(target error) bool {
	switch target {
	case ErrWatchInterrupted:
		return e.cause != nil
	case ErrPolling:
		return e.polling > 0
	}
	return false
}

func (e *watchError) Unwrap() error { return e.cause }

// eventsUnavailable reports whether err says filesystem events cannot be
// had (inotify instances or watches exhausted, a watch refused), as opposed
// to a watch that broke: retrying soon would fail again, polling works.
func eventsUnavailable(err error) bool {
	for _, errno := range []syscall.Errno{syscall.EMFILE, syscall.ENFILE, syscall.ENOSPC, syscall.EACCES, syscall.EPERM} {
		if errors.Is(err, errno) {
			return true
		}
	}
	return errors.Is(err, errors.ErrUnsupported)
}
