package file

import (
	"context"
	"io/fs"
	"log/slog"
	"path/filepath"
	"time"
)

// maxWatchRounds bounds how often watchChain re-resolves a chain that keeps
// changing while watches are being added; events bring it back if it gives
// up.
const maxWatchRounds = 8

// eventRetryInterval is how often a session that polls because events
// failed ends, so that events are tried again.
const eventRetryInterval = 30 * time.Second

// sink takes what a session finds. The watch that runs the session is its
// sink (delivery.go), and decides what of it reaches the callback.
type sink interface {
	// found takes a read the session believes: not one taken while the file
	// was being written, nor a missing or empty file that may be the middle
	// of an update.
	found(r reading)
	// watching says how the session notices changes, and the directories
	// it watches, sorted: once it is open, and whenever they change.
	watching(mode Mode, dirs []string)
	// started says that the session runs now, and how; remote names the
	// filesystem that reports no remote changes, if the file is on one.
	started(kind sessionKind, remote string)
	// checked says that a re-check found the file as the last read left
	// it: the watch is looking.
	checked()
}

// sessionKind is how a session notices changes.
type sessionKind uint8

const (
	onEvents     sessionKind = iota // filesystem events, with the re-check as a safety net
	pollForced                      // polling, because WithPolling asked for it
	pollFallback                    // polling, standing in for events that failed
)

// session is one run of a watch: a notifier watching what the path's
// current resolution depends on, and the judge (judge.go) that decides what
// its events and reads mean. The session is the shell around the judge: it
// runs the loop and the timers, resolves, reads, stats and watches, hands
// the judge what it found, and carries out what the judge decided. It
// knows nothing of the provider or the callback; it hands what it believes
// to its sink. It ends, and the restart loop opens another, when:
//   - its context is done (the only end that is not a failure);
//   - its notifier reports an error, or closes a channel;
//   - a watch the path depends on cannot be added for another reason than
//     the path vanishing under it (which is resolved again);
//   - the file's directory refused a watch and nothing stands in for it
//     (watchSet.blind): the session ends to poll;
//   - it polls in place of events that failed, and it is time to try them
//     again (errTryEvents).
//
// A session that polls has a notifier that never has events (noEvents): it
// re-reads at the poll interval.
type session struct {
	t    target
	out  sink
	kind sessionKind
	n    notifier
	ws   *watchSet
	cw   chainWatch // the path's resolution, and the watches kept for it
	j    *judge
	f    *diskFacts // the facts of the event or read being judged

	timer    *time.Timer // the judge's wait, or the retry's, whichever ends first
	timerAt  time.Time   // when timer fires; zero if it is stopped
	retry    retry       // the retry of a read that failed for a reason of the process
	remoteFS string      // the file's filesystem delivers no events for remote changes
	// tryEvents ends a poll session that stands in for events.
	tryEvents *time.Timer

	queued, late []event // askQueue's, kept from one read to the next
}

// openSession creates a notifier and makes it watch what the path depends
// on. The sink is told of the session once it is open.
func openSession(t target, out sink) (*session, error) {
	n, err := t.opts.newNotifier()
	if err != nil {
		return nil, err
	}
	s := newSession(t, n, onEvents)
	if err := s.cw.watch(false); err != nil {
		s.close()
		return nil, err
	}
	if name, none := t.opts.fsType(s.cw.view.home); none {
		s.remoteFS = name
	}
	s.out, s.ws.dirty = out, true
	s.tellWatching()
	return s, nil
}

// newPollSession makes a session that polls. A fallback, standing in for
// events that failed, ends after eventRetryInterval so that they are tried
// again.
func newPollSession(t target, out sink, fallback bool) *session {
	s := newSession(t, noEvents{}, pollForced)
	if fallback {
		s.kind = pollFallback
		s.tryEvents = time.NewTimer(eventRetryInterval)
	}
	s.out = out
	out.watching(ModePolling, nil)
	return s
}

func newSession(t target, n notifier, kind sessionKind) *session {
	s := &session{t: t, n: n, kind: kind, ws: newWatchSet(n),
		retry: retry{bo: backoff{min: t.opts.backoffMin, max: t.opts.backoffMax}}}
	s.j = newJudge(t, s.ws.caps, kind == onEvents, &s.cw.view)
	s.f = newDiskFacts(t.subj, s.ws)
	s.cw = chainWatch{subj: t.subj, path: t.path, events: kind == onEvents, ws: s.ws, j: s.j, tell: s.tellWatching,
		want: s.ws.want, touched: s.j.due.touchedName}
	return s
}

// events reports whether the session has events: it does not poll for
// want of them.
func (s *session) events() bool { return s.kind == onEvents }

// polls reports whether the session re-reads at the poll interval: it has
// no events, or its file is on a filesystem that reports no events for
// remote changes.
func (s *session) polls() bool { return !s.events() || s.remoteFS != "" }

// mode is how the session notices changes.
func (s *session) mode() Mode {
	if s.polls() {
		return ModePolling
	}
	return ModeEvents
}

// run hands first, the read made when the session was opened, to the sink,
// then handles events, and requests to look now from look, until the
// session fails or ctx is done; it returns nil only in the latter case.
func (s *session) run(ctx context.Context, first reading, look <-chan struct{}) error {
	s.out.started(s.kind, s.remoteFS)
	if traceHook != nil {
		tracef(s.t.path, "first read %s: %s", first.why, first.summary())
	}
	// While the watch was down, no event told of writers.
	s.offer(&first, readOrder{why: first.why, trust: doubtful, fresh: first.why == ReasonRestart}, nil, false)
	if err := s.cw.afterRead(false); err != nil {
		return err
	}
	return s.loop(ctx, look)
}

func (s *session) loop(ctx context.Context, look <-chan struct{}) error {
	var (
		tick    <-chan time.Time
		recheck *time.Timer
		every   = s.recheckEvery()
	)
	if every > 0 {
		recheck = time.NewTimer(untilTick(every))
		defer recheck.Stop()
		tick = recheck.C
	}
	var retry <-chan time.Time
	if s.tryEvents != nil {
		retry = s.tryEvents.C
	}
	s.timer = time.NewTimer(time.Hour)
	s.timer.Stop()
	defer s.timer.Stop()
	for {
		// A read can ask for another (the chain moved while its watches
		// were being added; events it took say a writer began or events
		// were lost). Nothing else would wake the loop for it.
		for {
			why, t, ok := s.j.due.next()
			if !ok {
				break
			}
			if err := s.refresh(why, t); err != nil {
				return err
			}
		}
		s.setTimer()
		select {
		case <-ctx.Done():
			return nil
		case <-retry:
			return errTryEvents
		case ev, ok := <-s.n.Events():
			if !ok {
				return errEventsClosed
			}
			s.event(ev)
		case err, ok := <-s.n.Errors():
			if !ok {
				return errErrorsClosed
			}
			return err
		case <-s.timer.C:
			s.timerAt = time.Time{}
			if err := s.timerFired(); err != nil {
				return err
			}
		case <-tick:
			recheck.Reset(untilTick(every))
			if err := s.look(ReasonRecheck, false); err != nil {
				return err
			}
		case <-look:
			if ctx.Err() != nil {
				return nil // stopping: the request was for a watch that is over
			}
			if err := s.look(ReasonRequest, true); err != nil {
				return err
			}
		}
	}
}

// setTimer sets the session's timer to the earlier of the judge's wait's
// deadline and the retry's, if it is not set so already.
func (s *session) setTimer() {
	at := s.j.wait.deadline
	if r := s.retry.at; !r.IsZero() && (at.IsZero() || r.Before(at)) {
		at = r
	}
	if at.Equal(s.timerAt) {
		return
	}
	s.timerAt = at
	if at.IsZero() {
		s.timer.Stop()
		return
	}
	s.timer.Reset(time.Until(at))
}

// timerFired takes the end of the judge's wait, or the retry's due time,
// whichever came.
func (s *session) timerFired() error {
	now := time.Now()
	if r := s.retry.at; !r.IsZero() && !now.Before(r) {
		o := s.retry.fired()
		s.j.due.fresh = o.fresh
		return s.refresh(o.why, o.trust)
	}
	if d := s.j.wait.deadline; !d.IsZero() && !now.Before(d) {
		why, t := s.j.wait.fired(now)
		return s.refresh(why, t)
	}
	return nil
}

// untilTick returns the time until the next multiple of every on the clock.
// Every provider with the same interval re-checks at the same instants, so
// ten thousand of them wake the process once per interval rather than ten
// thousand times at scattered moments: on some virtual machines a wake-up
// from sleep costs far more than the stat it is for.
func untilTick(every time.Duration) time.Duration {
	now := time.Now()
	return now.Truncate(every).Add(every).Sub(now)
}

// recheckEvery is the session's re-check interval: the poll interval when
// it polls, the option's otherwise.
func (s *session) recheckEvery() time.Duration {
	if s.polls() {
		return s.t.opts.pollInterval()
	}
	return s.t.opts.recheck
}

// event hands one event from the notifier to the judge, with the facts of
// this moment, and forgets the watches it says the kernel dropped.
func (s *session) event(ev event) {
	s.f.reset()
	s.judgeEvent(ev, s.f)
}

// judgeEvent hands ev to the judge with the facts f.
func (s *session) judgeEvent(ev event, f facts) {
	if !ev.has(opRescan) {
		ev.name = filepath.Clean(ev.name)
	}
	kind := s.j.event(ev, f, time.Now())
	if traceHook != nil {
		for _, p := range s.j.due.drop {
			tracef(s.t.path, "watch gone %s", p)
		}
		traceEvent(s.t.path, &s.cw.view, ev, kind)
	}
	s.judged()
}

// refresh re-resolves the path, re-reads, and watches what the path now
// depends on. It keeps the path to the delivery short: when the chain moved
// to a directory not watched yet (a kubelet update), it reads before adding
// the watch, then checks that the file did not change in between: a change
// after the Add comes as an event, one before it shows in the stat, and
// the file is looked at again as where no watch saw writers (which waits
// for one only if the file says it was written lately). Stale watches are
// removed, and the chain checked for having moved meanwhile, after the
// delivery too. After lost events it re-adds every watch, in case one was
// dropped unseen.
func (s *session) refresh(why Reason, t trust) error {
	if traceHook != nil {
		tracef(s.t.path, "refresh %s %s", why, t)
	}
	if !s.events() {
		if o, ok := s.j.wait.mayRead(why, t, false); ok {
			s.read(o)
		} else {
			traceLeft(s.t.path, why, t, s.j.wait.state)
		}
		return nil // a poll session watches nothing
	}
	all := s.j.due.takeRewatch()
	if all || s.j.due.fromRoot() {
		s.cw.resolve()
	} else {
		s.cw.resume()
	}
	s.f.reset()
	// What moved carries is for this refresh's read alone, whatever
	// path it takes out.
	defer s.j.refreshDone()
	if o, ok := s.j.refreshing(why, t, s.ws.watched[s.cw.view.home], s.ws.unheard(&s.cw.view), s.f); ok {
		s.read(o)
	} else {
		traceLeft(s.t.path, why, t, s.j.wait.state)
	}
	// What to watch is worked out after the read, which it would only
	// delay: the read goes by the resolution.
	return s.cw.afterRead(all)
}

// read reads the subject for o and offers what it finds.
func (s *session) read(o readOrder) {
	var via *sight
	if s.events() {
		via = &s.cw.view // resolved just before
	}
	r := s.t.subj.read(o.why, via)
	var file fs.FileInfo
	if via != nil {
		file = via.file
	}
	s.offer(&r, o, file, true)
}

// offer has the judge judge a read, and carries out its verdict: the sink
// gets what is believed, and a read that failed for a reason of the process
// is told of and made again after a backoff. A read believable if no
// later writer began is judged again with the events the kernel queued by
// now (laterWriter).
//
// traceRead says whether to trace the read, for one the session made.
func (s *session) offer(r *reading, o readOrder, via fs.FileInfo, traceRead bool) {
	now := time.Now()
	s.f.reset()
	v := s.j.read(r, &o, via, s.f, now)
	defer s.judged()
	if traceHook != nil && traceRead {
		tracef(s.t.path, "read %s %s fresh=%v: %s", o.why, o.trust, o.fresh, r.summary())
	}
	if v == verdictRetry {
		s.retry.later(o, now)
		traceOffer(s.t.path, v, &s.j.wait)
		s.out.found(*r)
		return
	}
	s.retry.done()
	if v == verdictAsk {
		if v = s.askQueue(r, now); v == verdictBelieve {
			v = s.j.closedEmpty(r, o.trust, now)
		}
	}
	if v == verdictBelieve {
		s.j.believe(r)
	}
	traceOffer(s.t.path, v, &s.j.wait)
	if v == verdictBelieve {
		s.out.found(*r)
	}
}

// askQueue takes every event the kernel queued by now, and those that come
// while they are taken, and has the judge say whether they tell of a
// writer that began after the read r: see judge.laterWriter. The queued
// events happened before the facts taken for them, which answer for all of
// them; those that came after are judged with facts of their own. They
// are taken here, not by the loop, and none of them is handled again.
func (s *session) askQueue(r *reading, now time.Time) verdict {
	if r.err == nil && r.c.size() == 0 {
		for _, p := range s.t.subj.paths() {
			awaitTruncation(p)
		}
	}
	s.n.Sync()
	if traceHook != nil {
		tracef(s.t.path, "sync")
	}
	queued, late, closed := drain(s.n.Events(), s.queued[:0], s.late[:0])
	s.queued, s.late = queued, late // kept for the next time
	if closed {
		return verdictHold // the loop sees the channel closed
	}
	s.f.reset()
	qf, lf := facts(s.f), facts(s.f)
	if len(late) > 0 {
		lf = newDiskFacts(s.t.subj, s.ws)
	}
	defer s.judged()
	var taken []takenEvent
	if traceHook != nil {
		taken = make([]takenEvent, 0, len(queued)+len(late))
	}
	v := s.j.laterWriter(r, queued, late, qf, lf, now, &taken)
	if traceHook != nil {
		traceTaken(s.t.path, &s.cw.view, append(queued, late...), taken, s.j.due.drop)
	}
	return v
}

// drain takes the events in ch: those in it when it is called (queued),
// and those that come while they are taken (late), appended to the slices
// given. closed reports that ch was closed.
func drain(ch <-chan event, queued, late []event) ([]event, []event, bool) {
	n := len(ch)
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				return queued, late, true
			}
			if len(queued) < n {
				queued = append(queued, ev)
			} else {
				late = append(late, ev)
			}
		default:
			return queued, late, false
		}
	}
}

// judged carries out what the judge decided of the watches: it forgets
// those the kernel dropped, and watches the file a wait is for by itself,
// as its witness.
func (s *session) judged() {
	for _, p := range s.j.due.takeDropped() {
		s.ws.drop(p)
	}
	if p := s.j.awaited(); p != "" {
		s.j.writer.watched(s.ws.addAwaited(p, s.j.writer.file, s.cw.traceAdd))
	}
}

// look is the periodic re-check, the safety net, and Recheck's look now
// (force): see judge.look.
func (s *session) look(why Reason, force bool) error {
	st := s.t.subj.stat()
	k := s.j.last.look(force, st, s.j.wait.window)
	if traceHook != nil {
		tracef(s.t.path, "look %s force=%v unchanged=%v", why, force, k == lookRead || k == lookNothing)
	}
	if k == lookNothing {
		s.out.checked()
		return nil
	}
	if err := s.cw.watch(true); err != nil {
		return err
	}
	switch k {
	case lookGuess:
		s.j.guess(why, time.Now())
		return nil
	case lookRead:
		s.read(readOrder{why: why, trust: doubtful})
	default:
		s.read(readOrder{why: why, trust: believed})
	}
	return s.cw.afterRead(false)
}

// close releases the session's timers and notifier. A notifier's close
// error only says it was already broken; the session is over either way.
func (s *session) close() {
	s.retry.done()
	if s.tryEvents != nil {
		s.tryEvents.Stop()
	}
	if err := s.n.Close(); err != nil {
		s.t.opts.log().Debug("keepwatch: closing notifier", slog.String("path", s.t.path), slog.Any("error", err))
	}
}

// tellWatching tells the sink, once it has one, what is watched now, if
// that changed since it was last told.
func (s *session) tellWatching() {
	if s.ws.dirty && s.out != nil {
		s.ws.dirty = false
		var dirs []string
		if s.events() {
			dirs = s.ws.dirs(&s.cw.view, s.j.witnessKept())
		}
		s.out.watching(s.mode(), dirs)
	}
}
