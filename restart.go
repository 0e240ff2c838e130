package file

import (
	"context"
	"errors"
	"time"
)

// rearmSink is what the restart loop tells of: what its sessions find,
// and each session that failed.
type rearmSink interface {
	sink
	// interrupted says that a session ended on err, and what follows:
	// ModeRetrying, a new session after retryIn, or ModePolling, a poll
	// session standing in for events until they can be tried again.
	interrupted(err error, next Mode, retryIn time.Duration)
}

// launch is one try at opening a session, and the read made right after it.
type launch struct {
	s    *session // nil if it could not be opened
	err  error    // why not
	read reading
}

// launchSession tries to open a session, then reads the file. Watch calls
// it before it returns, so that every change after that is either in this
// read or reported by an event; the restart loop calls it for each restart.
func launchSession(t target, out sink, why Reason) launch {
	if t.opts.poll > 0 {
		return launchPoll(t, out, false, why)
	}
	s, err := openSession(t, out)
	var via *sight
	if s != nil {
		via = &s.cw.view
	}
	return launch{s: s, err: err, read: t.subj.read(why, via)}
}

// launchPoll makes a poll session, which cannot fail, and reads the file.
func launchPoll(t target, out sink, fallback bool, why Reason) launch {
	return launch{s: newPollSession(t, out, fallback), read: t.subj.read(why, nil)}
}

func (l launch) close() {
	if l.s != nil {
		l.s.close()
	}
}

// rearm is the supervised re-arm: it runs first, then session after
// session, until ctx is done. Whatever ends a session (the notifier cannot
// be created, an Add fails, an error arrives, a channel closes)
// is told to out and followed by a new session after a capped, jittered
// backoff; the new session re-reads the file, so an update made while the
// watch was down is delivered then. Where events cannot be had at all, a
// poll session stands in for them, and events are tried again now and then.
// A request on look cuts a backoff short.
func rearm(ctx context.Context, t target, out rearmSink, look <-chan struct{}, first launch) {
	bo := backoff{min: t.opts.backoffMin, max: t.opts.backoffMax}
	l := first
	for {
		if ctx.Err() != nil {
			l.close()
			return
		}
		start := time.Now()
		err := runSession(ctx, l, out, look)
		if ctx.Err() != nil {
			return
		}
		switch {
		case errors.Is(err, errTryEvents):
			l = launchSession(t, out, ReasonRestart)
			continue
		case eventsUnavailable(err):
			// Retrying at once would fail again: poll, and try events
			// again later. Polling is its own wait; no backoff.
			out.interrupted(err, ModePolling, 0)
			l = launchPoll(t, out, true, ReasonRestart)
			continue
		}
		delay := bo.next(time.Since(start))
		out.interrupted(err, ModeRetrying, delay)
		if !sleep(ctx, look, delay) {
			return
		}
		l = launchSession(t, out, ReasonRestart)
	}
}

// runSession runs the launch's session until it ends. With no session it
// only hands on the read, so updates still flow, at the pace of the
// backoff, while no watch can be armed.
func runSession(ctx context.Context, l launch, out sink, look <-chan struct{}) error {
	if l.s == nil {
		out.found(l.read)
		return l.err
	}
	defer l.s.close()
	return l.s.run(ctx, l.read, look)
}

// sleep waits out a backoff, and reports whether the watch goes on. A
// request to look now cuts it short: the next session's launch is the look.
func sleep(ctx context.Context, look <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	case <-look:
		return ctx.Err() == nil
	}
}
