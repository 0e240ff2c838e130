package file

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/keepwatch/file/internal/decide"
	"github.com/keepwatch/file/internal/events"
	"github.com/keepwatch/file/internal/filemount"
)

// delivery is one call to Watch: a goroutine that runs the restart loop
// (restart.go), and the sink of the loops it runs, which hands on to the
// callback what is news to the application: content it has not got yet
// (core.admit compares it, under the provider's lock, with what it got
// last), each problem once while it lasts. It records Stats as it goes.
type delivery struct {
	c      *core
	cb     func(event any, err error)
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}               // closed when the goroutine has exited
	look   chan struct{}               // Recheck's requests to look now; it holds one, so they coalesce
	prev   *delivery                   // the delivery before, which may still be in its last callback; read by run only
	bell   atomic.Pointer[events.Bell] // what the running loop waits on, if it waits on a bell: rung after a stop or a request to look

	// Owned by the watch's goroutine (and, before it starts, by Watch).
	fileProblem  problem // the file problem last reported; zero while the file reads fine
	readProblem  problem // the process's own read failure last reported; zero once a read works
	watchProblem problem // the watch problem last reported; zero once a loop on events runs
}

func (w *delivery) stop()         { w.cancel() }
func (w *delivery) stopped() bool { return w.ctx.Err() != nil }

// requestLook asks the watch to look now. It never blocks: a request already
// pending will look at what this one would.
func (w *delivery) requestLook() {
	select {
	case w.look <- struct{}{}:
	default:
	}
	w.bell.Load().Ring()
}

// waitsOn records the bell the running loop waits on (nil: none). A stop
// or a request made before it is seen by the loop's first look at its
// context and its requests, which comes after.
func (w *delivery) waitsOn(b *events.Bell) { w.bell.Store(b) }

// run is the watch's goroutine.
func (w *delivery) run(first launch) {
	defer close(w.done)
	// The watch's end, by Unwatch or by WatchWithContext's context, rings
	// the bell its loop may wait on. The goroutine context.AfterFunc starts
	// for it is waited for before run returns.
	var ringing sync.WaitGroup
	ringing.Add(1)
	unring := context.AfterFunc(w.ctx, func() {
		defer ringing.Done()
		w.bell.Load().Ring()
	})
	defer func() {
		if unring() {
			ringing.Done() // never started
		}
		ringing.Wait()
	}()
	if w.prev != nil {
		// Callbacks never overlap, even when a callback stops its watch and
		// starts another; its done also says that its own prev is done.
		<-w.prev.done
		w.prev = nil
	}
	w.checkMount()
	rearm(w.ctx, w.c.t, w, w.look, first)
}

// found takes a read a loop accepted. Content the application has not
// got goes on to the callback; a new problem with the file is reported.
// After a problem, the file coming back is delivered even if its content is
// what was delivered last: the callback's last word must describe the file
// as it is.
func (w *delivery) found(r reading) {
	log := w.c.t.opts.log()
	if w.readProblem != (problem{}) {
		w.readProblem = problem{}
		log.Info("keepwatch: read works again", slog.String("path", w.c.t.path))
	}
	w.recheckReplaced()
	if r.err != nil {
		if !w.c.takeBaseline(w, r, decide.ForwardRead) {
			w.reportFile(r.err)
		}
		return
	}
	w.c.recordRead(w)
	back := w.fileProblem != problem{}
	w.fileProblem = problem{}
	if back {
		log.Info("keepwatch: file back", slog.String("path", w.c.t.path))
	}
	w.deliver(r, back)
}

// deliver calls the callback with r's content, if it is news to the
// application (or back is set), and the watch still runs. While the callback
// runs, reads return that content.
func (w *delivery) deliver(r reading, back bool) {
	c := w.c
	op, ok := c.admit(w, &r.c, Reason(r.why), back)
	if !ok {
		return
	}
	defer c.endDelivery()
	ev := c.eventOf(&r.c, op)
	c.handOver()
	w.cb(ev, nil)
	c.logDelivery(r)
}

// unchanged records a look that found the file unchanged, and judges
// again a single-file mount's source.
func (w *delivery) unchanged() {
	w.c.recordCheck(w)
	w.recheckMount()
}

// watching records how the running loop watches.
func (w *delivery) watching(mode Mode, dirs []string) {
	w.c.recordWatching(w, mode, dirs)
}

// readFailed reports a read that failed for a reason of the process (too
// many open files, no memory), which the loop retries, once as what it is:
// it is no problem of the file, and neither sets the baseline nor makes
// the file's next read a comeback.
func (w *delivery) readFailed(err error) { w.reportRead(err) }

// started tells of a loop that starts to run as the supervisor decided
// (st): how it notices changes, and a filesystem without remote events
// (remote), once.
func (w *delivery) started(st decide.Start, remote string) {
	opts := w.c.t.opts
	log := opts.log().With(slog.String("path", w.c.t.path))
	switch st.Tell {
	case decide.TellPolling:
		log.Debug("keepwatch: polling", slog.Duration("every", opts.poll))
		return
	case decide.TellNothing:
		return // reported as such when events failed
	case decide.TellRearmed:
		log.Info("keepwatch: watch re-armed", slog.Int("attempts", st.Rearmed), slog.Any("dirs", w.c.watchedDirs()))
	default:
		log.Debug("keepwatch: watch started", slog.Any("dirs", w.c.watchedDirs()))
	}
	w.watchProblem = problem{}
	if st.TellRemote {
		w.reportWatch(&watchError{polling: opts.pollInterval(), fs: remote}, 0, 0)
	}
}

// interrupted takes a loop that ended on err, as the supervisor decided
// of it (sv): it is counted, and reported unless the same problem was
// reported since the last loop on events.
func (w *delivery) interrupted(err error, sv decide.Supervision) {
	next := ModeRetrying
	if sv.Run == decide.RunPoll {
		next = ModePolling
	}
	w.c.recordFailure(w, next, sv.Restart)
	we := &watchError{cause: err}
	if next == ModePolling {
		we.polling = w.c.t.opts.pollInterval()
	}
	w.reportWatch(we, sv.Failures, sv.After)
}

// reportFile reports a problem with the file (missing, not regular, too
// large, unreadable) once; the watch goes on and delivers the file when it
// is readable again.
func (w *delivery) reportFile(err error) {
	p := problemOf(kindFile, err)
	if p == w.fileProblem {
		return
	}
	w.fileProblem = p
	w.c.t.opts.log().Warn("keepwatch: file problem", slog.String("path", w.c.t.path), slog.Any("error", err))
	w.report(err)
}

// reportRead reports, once, a read that failed for a reason of the process,
// not of the file; the loop retries it until it reads.
func (w *delivery) reportRead(err error) {
	p := problemOf(kindProcess, err)
	if p == w.readProblem {
		return
	}
	w.readProblem = p
	w.c.t.opts.log().Warn("keepwatch: read failed, retrying", slog.String("path", w.c.t.path), slog.Any("error", err))
	w.report(err)
}

// reportWatch reports a problem with the watch itself, unless it is the
// same one as the last reported and no loop on events ran in between:
// then it only logs the retry, at debug level.
func (w *delivery) reportWatch(we *watchError, attempt int, retryIn time.Duration) {
	kind := kindBroken
	switch {
	case we.fs != "":
		kind = kindRemote
	case we.polling > 0:
		kind = kindPolling
	}
	p := problemOf(kind, we.cause)
	again := p == w.watchProblem
	level := slog.LevelWarn
	if again {
		level = slog.LevelDebug
	}
	log := w.c.t.opts.log()
	ctx := context.Background()
	path := slog.String("path", w.c.t.path)
	switch kind {
	case kindRemote:
		log.Log(ctx, level, "keepwatch: no events on this filesystem, polling", path,
			slog.String("fs", we.fs), slog.Duration("every", we.polling))
	case kindPolling:
		log.Log(ctx, level, "keepwatch: events unavailable, polling", path,
			slog.Any("error", we.cause), slog.Duration("every", we.polling))
	default:
		log.Log(ctx, level, "keepwatch: watch interrupted", path,
			slog.Any("error", we.cause), slog.Int("attempt", attempt), slog.Duration("retry_in", retryIn))
	}
	if again {
		return
	}
	w.watchProblem = p
	w.report(w.c.errorf("watch", we))
}

// report counts a problem and, with WithErrorCallbacks, calls the callback
// with it, unless the watch has stopped.
func (w *delivery) report(err error) {
	if !w.c.recordError(w, err) {
		return
	}
	w.c.handOver()
	w.cb(nil, err)
}

// checkMount looks for a single file mounted at the path when a watch
// starts. The first watch of a provider to find one says what it is, once
// per provider; each judges its source.
func (w *delivery) checkMount() {
	t := w.c.t
	if t.opts.mountInfo == "" {
		return
	}
	first := w.c.subPathChecked.CompareAndSwap(false, true)
	if !first && !w.c.fileMounted() {
		return
	}
	f, m, err := mountFacts(t.opts.mountInfo, t.subj.paths(), w.c.knownMount())
	if err != nil {
		return // not Linux, or no /proc: nothing to say
	}
	if first {
		if !f.Mounted {
			return
		}
		source := filemount.Source(m.Root)
		w.c.recordSubPath(m)
		f.Source = source
		t.opts.log().Warn("keepwatch: single-file mount: edits in place arrive, a replacement does not; mount the directory instead",
			slog.String("path", t.path), slog.String("mount", m.Point), slog.String("source", source))
		w.report(w.c.errorf("watch", &mountError{kind: ErrSubPathMount, source: source}))
	}
	w.judgeMount(f, true)
}

// recheckMount judges again whether the source of the single file mounted
// at the path, if there is one, was replaced. A mount made again is
// recorded, with its source: the file a remount brings is the one its
// source names then.
func (w *delivery) recheckMount() {
	t := w.c.t
	if t.opts.mountInfo == "" || !w.c.fileMounted() {
		return
	}
	known := w.c.knownMount()
	f, m, err := mountFacts(t.opts.mountInfo, t.subj.paths(), known)
	if err != nil {
		return
	}
	if f.Mounted && m.ID != known.id {
		w.c.recordSubPath(m)
	}
	w.judgeMount(f, false)
}

// judgeMount takes what the mount's facts mean, and tells of a change:
// a replaced source as a problem, once per watch while it lasts, and its
// end. start says that the watch starts.
func (w *delivery) judgeMount(f filemount.Facts, start bool) {
	now := filemount.Judge(f)
	was, ok := w.c.recordMount(w, now)
	if !ok {
		return
	}
	log := w.c.t.opts.log()
	attrs := []any{slog.String("path", w.c.t.path), slog.String("mount", was.point), slog.String("source", was.source)}
	if held := filemount.Source(f.Root); f.Mounted && held != was.source {
		attrs = append(attrs, slog.String("held", held)) // the name the source was renamed to
	}
	switch filemount.Next(was.state, now, start) {
	case filemount.Tell:
		log.Warn("keepwatch: mount source replaced, its changes no longer arrive; restart to read them, and mount the directory instead", attrs...)
		w.report(w.c.errorf("watch", &mountError{kind: ErrSourceReplaced, source: was.source}))
	case filemount.Over:
		log.Info("keepwatch: mount source back", attrs...)
	}
}

// selfChanged takes a change of the file's attributes or name an event
// told of: a source replaced on the host side drops the link count of the
// file mounted, and one renamed away moves it.
func (w *delivery) selfChanged() { w.recheckMount() }

// recheckReplaced judges the mount again before a read is taken, while its
// source is replaced: a read after a re-check found another file there is
// how a mount made again shows.
func (w *delivery) recheckReplaced() {
	if w.c.sourceReplaced() {
		w.recheckMount()
	}
}
