package file

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/keepwatch/file/internal/decide"
	"github.com/keepwatch/file/internal/osfile"
)

// randomSeed seeds every backoff: the one source of the watch's
// randomness. Tests that compare two builds' decisions fix it.
var randomSeed = rand.Uint64

// rearmSink is what the restart loop tells of: what its loops find, and
// each loop that failed.
type rearmSink interface {
	sink
	// interrupted says that a loop ended on err, and what follows:
	// ModeRetrying, a new loop after retryIn, or ModePolling, a poll
	// loop standing in for events until they can be tried again.
	interrupted(err error, next Mode, retryIn time.Duration)
}

// launch is one try at opening a loop, and the read made right after it.
type launch struct {
	l    *watchLoop // nil if it could not be opened
	err  error      // why not
	read reading
}

// launchLoop tries to open a loop, then reads the file. Watch calls it
// before it returns, so that every change after that is either in this
// read or reported by an event; the restart loop calls it for each
// restart.
func launchLoop(t target, out sink, why decide.Reason) launch {
	if t.opts.poll > 0 {
		return launchPoll(t, out, false, why)
	}
	l, err := openLoop(t, out)
	var via *resolution
	if l != nil {
		via = &l.res
	}
	return launch{l: l, err: err, read: t.subj.read(why, via, t.opts.probeWriters, false)}
}

// launchPoll makes a poll loop, which cannot fail, and reads the file.
func launchPoll(t target, out sink, fallback bool, why decide.Reason) launch {
	return launch{l: newPollLoop(t, out, fallback), read: t.subj.read(why, nil, t.opts.probeWriters, false)}
}

func (l launch) close() {
	if l.l != nil {
		l.l.close()
	}
}

// rearm is the supervised re-arm: it runs first, then loop after loop,
// until ctx is done. Whatever ends a loop (the notifier cannot be created,
// an Add fails, an error arrives, a channel closes) is told to out and
// followed by a new loop after a capped, jittered backoff; the new loop
// re-reads the file, so an update made while the watch was down is
// delivered then. Where events cannot be had at all, a poll loop stands in
// for them, and events are tried again now and then. A request on look
// cuts a backoff short.
func rearm(ctx context.Context, t target, out rearmSink, look <-chan struct{}, first launch) {
	bo := decide.NewBackoff(t.opts.backoffMin, t.opts.backoffMax, randomSeed())
	l := first
	for {
		if ctx.Err() != nil {
			l.close()
			return
		}
		start := time.Now()
		err := runLoop(ctx, l, out, look)
		if ctx.Err() != nil {
			return
		}
		switch {
		case errors.Is(err, errTryEvents):
			l = launchLoop(t, out, decide.ReasonRestart)
			continue
		case osfile.EventsUnavailable(err):
			// Retrying at once would fail again: poll, and try events
			// again later. Polling is its own wait; no backoff.
			out.interrupted(err, ModePolling, 0)
			l = launchPoll(t, out, true, decide.ReasonRestart)
			continue
		}
		delay := bo.Next(time.Since(start))
		out.interrupted(err, ModeRetrying, delay)
		if !sleep(ctx, look, delay) {
			return
		}
		l = launchLoop(t, out, decide.ReasonRestart)
	}
}

// runLoop runs the launch's loop until it ends. With no loop it only
// hands on the read, so updates still flow, at the pace of the backoff,
// while no watch can be armed.
func runLoop(ctx context.Context, l launch, out sink, look <-chan struct{}) error {
	if l.l == nil {
		out.found(l.read)
		return l.err
	}
	defer l.l.close()
	return l.l.run(ctx, l.read, look)
}

// sleep waits out a backoff, and reports whether the watch goes on. A
// request to look now cuts it short: the next loop's launch is the look.
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
