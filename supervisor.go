package file

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"log/slog"
	"runtime"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/keepwatch/file/internal/mountinfo"
)

// supervisor is one call to Watch: a goroutine that runs watch sessions one
// after another, with a backoff between them, until it is stopped.
// Whatever ends a session (the notifier cannot be created, an Add fails, an
// error or overflow arrives, a channel closes) is reported once and
// followed by a new session, which re-reads the file: an update made while
// the watch was down is delivered then.
//
// It is the sink of its sessions, and decides what of their reads reaches
// the callback: content the application has not seen, and each problem
// once.
type supervisor struct {
	f      *File
	cb     func(event any, err error)
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{} // closed when the goroutine has exited
	goid   atomic.Uint64 // the goroutine's id, so Unwatch can tell it calls from a callback
	prev   *supervisor   // a stopped one that may still be in its last callback; guarded by f.mu

	// Owned by the goroutine.
	fileProblem  problem // the file problem last reported; zero while the file reads fine
	watchProblem problem // the watch problem last reported; zero once a session runs
	remoteNoted  string  // the event-less filesystem already reported
	failures     int     // sessions failed in a row
	fellBack     bool    // polling because events failed; trying them again is no restart
}

// launch is one try at opening a session, and the read made right after it.
type launch struct {
	s     *session // nil if it could not be opened
	err   error    // why not
	first reading
}

// launchSession tries to open a session, then reads the file. Watch calls
// it before it returns, so that every change after that is either in this
// read or reported by an event; the supervisor calls it for each restart.
func launchSession(t target, why reason) launch {
	if t.opts.poll > 0 {
		return launchPoll(t, false, why)
	}
	s, err := openSession(t)
	return launch{s: s, err: err, first: t.read(why)}
}

// launchPoll makes a poll session, which cannot fail, and reads the file.
func launchPoll(t target, fallback bool, why reason) launch {
	return launch{s: newPollSession(t, fallback), first: t.read(why)}
}

func (l launch) close() {
	if l.s != nil {
		l.s.close()
	}
}

func startSupervisor(parent context.Context, f *File, cb func(any, error), prev *supervisor, first launch) *supervisor {
	ctx, cancel := context.WithCancel(parent)
	w := &supervisor{f: f, cb: cb, ctx: ctx, cancel: cancel, done: make(chan struct{}), prev: prev}
	go w.run(first)
	return w
}

func (w *supervisor) stop()         { w.cancel() }
func (w *supervisor) stopped() bool { return w.ctx.Err() != nil }

// runsOnCaller reports whether the caller runs on this supervisor's
// goroutine or on that of one it waits for, that is, inside a callback:
// such a caller must not wait for the watch to end. Called with f.mu held.
func (w *supervisor) runsOnCaller() bool {
	id := goid()
	for x := w; x != nil; x = x.prev {
		if x.goid.Load() == id {
			return true
		}
	}
	return false
}

func (w *supervisor) run(l launch) {
	defer close(w.done)
	w.goid.Store(goid())
	w.awaitPrev()
	w.checkSubPath()

	bo := backoff{min: w.f.t.opts.backoffMin, max: w.f.t.opts.backoffMax}
	for {
		if w.stopped() {
			l.close()
			return
		}
		start := time.Now()
		err := w.runSession(l)
		if w.stopped() {
			return
		}
		switch {
		case errors.Is(err, errTryEvents):
			l = launchSession(w.f.t, reasonRestart)
			continue
		case eventsUnavailable(err):
			// Retrying at once would fail again: poll, and try events
			// again later. Polling is its own wait; no backoff.
			w.failed(ModePolling)
			w.reportWatch(&watchError{cause: err, polling: w.f.t.opts.pollInterval()}, 0)
			l = launchPoll(w.f.t, true, reasonRestart)
			continue
		}
		delay := bo.next(time.Since(start))
		w.failed(ModeRetrying)
		w.reportWatch(&watchError{cause: err}, delay)
		if !w.sleep(delay) {
			return
		}
		l = launchSession(w.f.t, reasonRestart)
	}
}

// runSession hands the launch's read on and runs its session until it
// ends. With no session it only hands on the read, so updates still flow,
// at the pace of the backoff, while no watch can be armed.
func (w *supervisor) runSession(l launch) error {
	if l.s == nil {
		w.found(l.first)
		return l.err
	}
	defer l.s.close()
	w.sessionStarted(l.s)
	return l.s.run(w.ctx, w, l.first)
}

// awaitPrev waits until the previous supervisor has finished its last
// callback, so that callbacks never overlap, even when the callback itself
// calls Unwatch and then Watch.
func (w *supervisor) awaitPrev() {
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

func (w *supervisor) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-w.ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// sessionStarted records that a session runs, and logs how it watches.
func (w *supervisor) sessionStarted(s *session) {
	w.f.record(func(st *stats) { st.mode = s.mode() })
	opts := w.f.t.opts
	log := opts.log().With(slog.String("path", w.f.t.path))
	switch {
	case s.n == nil && opts.poll > 0:
		log.Debug("keepwatch: polling", slog.Duration("every", opts.poll))
		return
	case s.n == nil:
		return // a fallback, reported as such
	case w.failures > 0:
		log.Info("keepwatch: watch re-armed", slog.Int("attempts", w.failures), slog.Any("dirs", s.chain.Dirs))
	default:
		log.Info("keepwatch: watch started", slog.Any("dirs", s.chain.Dirs))
	}
	w.failures, w.fellBack = 0, false
	w.watchProblem = problem{}
	if s.remoteFS != "" && s.remoteFS != w.remoteNoted {
		w.remoteNoted = s.remoteFS
		w.reportWatch(&watchError{polling: opts.pollInterval(), fs: s.remoteFS}, 0)
	}
}

// failed counts a session that ended in failure; mode is what follows.
func (w *supervisor) failed(mode Mode) {
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

// found is where the sessions hand their reads: content the application
// has not seen goes to the callback, a new problem with the file is
// reported.
func (w *supervisor) found(r reading) {
	if r.err != nil {
		w.reportFile(r.err)
		return
	}
	back := w.fileProblem != problem{}
	w.fileProblem = problem{}
	log := w.f.t.opts.log()
	if back {
		log.Info("keepwatch: file back", slog.String("path", w.f.t.path))
	}
	op, ok := w.f.startDelivery(w, r.c, r.why, back)
	if !ok {
		return
	}
	defer w.f.endDelivery()
	log.Info("keepwatch: update delivered", slog.String("path", w.f.t.path), slog.String("reason", string(r.why)),
		slog.Int("size", len(r.c.data)), slog.String("sha256", hex.EncodeToString(r.c.sum[:6])))
	w.cb(fsnotify.Event{Name: w.f.t.path, Op: op}, nil)
}

// watching records the directories a session watches.
func (w *supervisor) watching(dirs []string) {
	w.f.record(func(st *stats) { st.dirs = dirs })
}

// reportFile reports a problem with the file (missing, not regular, too
// large, unreadable) once; the watch goes on and delivers the file when it
// is readable again.
func (w *supervisor) reportFile(err error) {
	p := problemOf(fileProblem, err)
	if p == w.fileProblem {
		return
	}
	w.fileProblem = p
	w.f.t.opts.log().Warn("keepwatch: file problem", slog.String("path", w.f.t.path), slog.Any("error", err))
	w.report(err)
}

// reportWatch reports a problem with the watch itself, unless it is the
// same one as the last reported and no session ran in between: then it
// only logs the retry, at debug level.
func (w *supervisor) reportWatch(we *watchError, retryIn time.Duration) {
	kind := watchBroken
	switch {
	case we.fs != "":
		kind = noRemoteEvents
	case we.polling > 0:
		kind = watchPolled
	}
	p := problemOf(kind, we.cause)
	again := p == w.watchProblem
	level := slog.LevelWarn
	if again {
		level = slog.LevelDebug
	}
	log := w.f.t.opts.log()
	ctx := context.Background()
	path := slog.String("path", w.f.t.path)
	switch kind {
	case noRemoteEvents:
		log.Log(ctx, level, "keepwatch: no events on this filesystem, polling", path,
			slog.String("fs", we.fs), slog.Duration("every", we.polling))
	case watchPolled:
		log.Log(ctx, level, "keepwatch: events unavailable, polling", path,
			slog.Any("error", we.cause), slog.Duration("every", we.polling))
	default:
		log.Log(ctx, level, "keepwatch: watch interrupted", path,
			slog.Any("error", we.cause), slog.Int("attempt", w.failures), slog.Duration("retry_in", retryIn))
	}
	if again {
		return
	}
	w.watchProblem = p
	w.report(w.f.errorf("watch", we))
}

// report hands a problem to the callback and counts it.
func (w *supervisor) report(err error) {
	if w.stopped() {
		return
	}
	w.f.record(func(st *stats) {
		st.errors++
		st.lastError, st.lastErrorTime = err, time.Now()
	})
	w.cb(nil, err)
}

// checkSubPath warns, once per provider, when the watched file is a single
// file bind-mounted: a Kubernetes subPath mount, which kubelet never
// updates in a running pod. The watch goes on: an in-place write to the
// mounted file itself would still be seen.
func (w *supervisor) checkSubPath() {
	f := w.f
	table := f.t.opts.mountInfo
	if table == "" || !f.subPathChecked.CompareAndSwap(false, true) {
		return
	}
	mounts, err := mountinfo.ReadFile(table)
	if err != nil {
		return // not Linux, or no /proc: nothing to say
	}
	m, ok := subPathMount(mounts, f.t.abs)
	if !ok {
		return
	}
	f.t.opts.log().Warn("keepwatch: subPath mount, the file will not change in a running pod; mount the directory instead",
		slog.String("path", f.t.path), slog.String("mount", m.Point), slog.String("source", m.Root))
	w.report(f.errorf("watch", ErrSubPathMount))
}

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
