package file

import (
	"context"
	"errors"
	"log/slog"
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
// It is the sink of its sessions, and decides what of their reads goes on
// to the File and its callback: content it has not delivered, and each
// problem once.
type supervisor struct {
	f      *core
	cb     func(event any, err error)
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{} // closed when the goroutine has exited
	look   chan struct{} // Recheck's requests to look now; it holds one, so they coalesce

	// Owned by the goroutine.
	prev         *supervisor // the watch before, which may still be in its last callback
	seen         seenMark    // the content last delivered, or the baseline it started from
	fileProblem  problem     // the file problem last reported; zero while the file reads fine
	watchProblem problem     // the watch problem last reported; zero once a session on events runs
	remoteNoted  string      // the event-less filesystem already reported
	failures     int         // sessions failed in a row
	fellBack     bool        // polling because events failed; trying them again is no restart
}

// launch is one try at opening a session, and the read made right after it.
type launch struct {
	s    *session // nil if it could not be opened
	err  error    // why not
	read reading
}

// launchSession tries to open a session, then reads the file. Watch calls
// it before it returns, so that every change after that is either in this
// read or reported by an event; the supervisor calls it for each restart.
func launchSession(t target, why reason) launch {
	if t.opts.poll > 0 {
		return launchPoll(t, false, why)
	}
	s, err := openSession(t)
	return launch{s: s, err: err, read: t.subj.read(why)}
}

// launchPoll makes a poll session, which cannot fail, and reads the file.
func launchPoll(t target, fallback bool, why reason) launch {
	return launch{s: newPollSession(t, fallback), read: t.subj.read(why)}
}

func (l launch) close() {
	if l.s != nil {
		l.s.close()
	}
}

// startSupervisor starts a watch that delivers what differs from baseline,
// once prev, if any, has finished its last callback.
func startSupervisor(parent context.Context, f *core, cb func(any, error), prev *supervisor, first launch, baseline seenMark) *supervisor {
	ctx, cancel := context.WithCancel(parent)
	sv := &supervisor{f: f, cb: cb, ctx: ctx, cancel: cancel, done: make(chan struct{}), look: make(chan struct{}, 1),
		prev: prev, seen: baseline}
	go sv.run(first)
	return sv
}

func (sv *supervisor) stop()         { sv.cancel() }
func (sv *supervisor) stopped() bool { return sv.ctx.Err() != nil }

// nudge asks the watch to look now. It never blocks: a request already
// pending will look at what this one would.
func (sv *supervisor) nudge() {
	select {
	case sv.look <- struct{}{}:
	default:
	}
}

func (sv *supervisor) run(l launch) {
	defer close(sv.done)
	if sv.prev != nil {
		// Callbacks never overlap, even when a callback stops its watch and
		// starts another; its done also says that its own prev is done.
		<-sv.prev.done
		sv.prev = nil
	}
	sv.checkSubPath()

	bo := backoff{min: sv.f.t.opts.backoffMin, max: sv.f.t.opts.backoffMax}
	for {
		if sv.stopped() {
			l.close()
			return
		}
		start := time.Now()
		err := sv.runSession(l)
		if sv.stopped() {
			return
		}
		switch {
		case errors.Is(err, errTryEvents):
			l = launchSession(sv.f.t, reasonRestart)
			continue
		case eventsUnavailable(err):
			// Retrying at once would fail again: poll, and try events
			// again later. Polling is its own wait; no backoff.
			sv.sessionFailed(ModePolling)
			sv.reportWatch(&watchError{cause: err, polling: sv.f.t.opts.pollInterval()}, 0)
			l = launchPoll(sv.f.t, true, reasonRestart)
			continue
		}
		delay := bo.next(time.Since(start))
		sv.sessionFailed(ModeRetrying)
		sv.reportWatch(&watchError{cause: err}, delay)
		if !sv.sleep(delay) {
			return
		}
		l = launchSession(sv.f.t, reasonRestart)
	}
}

// runSession hands the launch's read on and runs its session until it
// ends. With no session it only hands on the read, so updates still flow,
// at the pace of the backoff, while no watch can be armed.
func (sv *supervisor) runSession(l launch) error {
	if l.s == nil {
		sv.found(l.read)
		return l.err
	}
	defer l.s.close()
	sv.sessionStarted(l.s)
	return l.s.run(sv.ctx, sv, l.read, sv.look)
}

// sleep waits out a backoff, and reports whether the watch goes on. A
// request to look now cuts it short: the next session's launch is the look.
func (sv *supervisor) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-sv.ctx.Done():
		return false
	case <-t.C:
		return true
	case <-sv.look:
		return sv.ctx.Err() == nil
	}
}

// sessionStarted records that a session runs, and logs how it watches.
func (sv *supervisor) sessionStarted(s *session) {
	sv.f.recordSession(s.mode(), s.watchedDirs())
	opts := sv.f.t.opts
	log := opts.log().With(slog.String("path", sv.f.t.path))
	switch {
	case s.pollOnly() && opts.poll > 0:
		log.Debug("keepwatch: polling", slog.Duration("every", opts.poll))
		return
	case s.pollOnly():
		return // a fallback, reported as such
	case sv.failures > 0:
		log.Info("keepwatch: watch re-armed", slog.Int("attempts", sv.failures), slog.Any("dirs", s.watchedDirs()))
	default:
		log.Debug("keepwatch: watch started", slog.Any("dirs", s.watchedDirs()))
	}
	sv.failures, sv.fellBack = 0, false
	sv.watchProblem = problem{}
	if fs := s.remote(); fs != "" && fs != sv.remoteNoted {
		sv.remoteNoted = fs
		sv.reportWatch(&watchError{polling: opts.pollInterval(), fs: fs}, 0)
	}
}

// sessionFailed counts a session that ended in failure; mode is what
// follows.
func (sv *supervisor) sessionFailed(mode Mode) {
	sv.failures++
	again := sv.fellBack && mode == ModePolling
	sv.fellBack = mode == ModePolling
	sv.f.recordFailure(mode, !again)
}

// found is where the sessions hand their reads: content this watch has not
// delivered goes on to File and the callback; a new problem with the file
// is reported. After a problem, the file coming back is delivered even if
// its content is what was delivered last: the callback's last word must
// describe the file as it is.
func (sv *supervisor) found(r reading) {
	if r.err != nil {
		sv.reportFile(r.err)
		return
	}
	back := sv.fileProblem != problem{}
	sv.fileProblem = problem{}
	if back {
		sv.f.opts.log().Info("keepwatch: file back", slog.String("path", sv.f.t.path))
	}
	if !back && sv.seen.state == seenContent && sv.seen.sum == r.c.sum {
		return
	}
	op := fsnotify.Write
	if back || sv.seen.state != seenContent {
		op = fsnotify.Create
	}
	if sv.f.deliver(sv.ctx, sv.cb, r, op) {
		sv.seen = markOf(r)
	}
}

// watchingDirs records the directories a session watches.
func (sv *supervisor) watchingDirs(dirs []string) {
	sv.f.recordDirs(dirs)
}

// reportFile reports a problem with the file (missing, not regular, too
// large, unreadable) once; the watch goes on and delivers the file when it
// is readable again.
func (sv *supervisor) reportFile(err error) {
	p := problemOf(kindFile, err)
	if p == sv.fileProblem {
		return
	}
	sv.fileProblem = p
	sv.f.opts.log().Warn("keepwatch: file problem", slog.String("path", sv.f.t.path), slog.Any("error", err))
	sv.f.report(sv.ctx, sv.cb, err)
}

// reportWatch reports a problem with the watch itself, unless it is the
// same one as the last reported and no session on events ran in between:
// then it only logs the retry, at debug level.
func (sv *supervisor) reportWatch(we *watchError, retryIn time.Duration) {
	kind := kindBroken
	switch {
	case we.fs != "":
		kind = kindRemote
	case we.polling > 0:
		kind = kindPolling
	}
	p := problemOf(kind, we.cause)
	again := p == sv.watchProblem
	level := slog.LevelWarn
	if again {
		level = slog.LevelDebug
	}
	log := sv.f.t.opts.log()
	ctx := context.Background()
	path := slog.String("path", sv.f.t.path)
	switch kind {
	case kindRemote:
		log.Log(ctx, level, "keepwatch: no events on this filesystem, polling", path,
			slog.String("fs", we.fs), slog.Duration("every", we.polling))
	case kindPolling:
		log.Log(ctx, level, "keepwatch: events unavailable, polling", path,
			slog.Any("error", we.cause), slog.Duration("every", we.polling))
	default:
		log.Log(ctx, level, "keepwatch: watch interrupted", path,
			slog.Any("error", we.cause), slog.Int("attempt", sv.failures), slog.Duration("retry_in", retryIn))
	}
	if again {
		return
	}
	sv.watchProblem = p
	sv.f.report(sv.ctx, sv.cb, sv.f.errorf("watch", we))
}

// checkSubPath warns, once per provider, when the watched file is a single
// file bind-mounted: a Kubernetes subPath mount, which kubelet never
// updates in a running pod. The watch goes on: an in-place write to the
// mounted file itself would still be seen.
func (sv *supervisor) checkSubPath() {
	f := sv.f
	table := f.t.opts.mountInfo
	if table == "" || !f.firstSubPathCheck() {
		return
	}
	mounts, err := mountinfo.ReadFile(table)
	if err != nil {
		return // not Linux, or no /proc: nothing to say
	}
	m, ok := subPathMount(mounts, f.t.subj.paths())
	if !ok {
		return
	}
	f.t.opts.log().Warn("keepwatch: subPath mount, the file will not change in a running pod; mount the directory instead",
		slog.String("path", f.t.path), slog.String("mount", m.Point), slog.String("source", m.Root))
	f.report(sv.ctx, sv.cb, f.errorf("watch", ErrSubPathMount))
}
