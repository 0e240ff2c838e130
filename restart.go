package file

import (
	"context"
	"errors"
	"time"

	"github.com/keepwatch/file/internal/decide"
	"github.com/keepwatch/file/internal/osfile"
)

// rearmSink is what the restart loop tells of: what its loops find, each
// loop that starts, and each that ended on a problem.
type rearmSink interface {
	sink
	// started says that a loop starts to run, how the supervisor would
	// have it told, and, if its file is on a filesystem that reports no
	// remote changes, which.
	started(st decide.Start, remote string)
	// interrupted says that a loop ended on err, and what the supervisor
	// decided of it: a poll loop standing in for events, or a new loop
	// after a backoff.
	interrupted(err error, sv decide.Supervision)
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
// until ctx is done, as the supervisor (decide.Supervisor) decides of each
// loop's end: whatever ends a loop (the notifier cannot be created, an Add
// fails, an error arrives, a channel closes) is told to out and followed
// by a new loop after a capped, jittered backoff; the new loop re-reads
// the file, so an update made while the watch was down is delivered then.
// Where events cannot be had at all, a poll loop stands in for them, and
// events are tried again now and then. A request on look cuts a backoff
// short.
func rearm(ctx context.Context, t target, out rearmSink, look <-chan struct{}, first launch) {
	s := decide.NewSupervisor(t.opts.backoffMin, t.opts.backoffMax, randomSeed())
	l := first
	for {
		start := time.Now()
		err := runLoop(ctx, t, l, out, look, s)
		sv := s.Ended(endOf(ctx, err), time.Since(start))
		if sv.Told {
			out.interrupted(err, sv)
		}
		switch sv.Run {
		case decide.RunNothing:
			return
		case decide.RunPoll:
			l = launchPoll(t, out, true, decide.ReasonRestart)
			continue
		case decide.RunRetry:
			if !sleep(ctx, look, sv.After) {
				return
			}
		}
		l = launchLoop(t, out, decide.ReasonRestart)
	}
}

// endOf is why a loop ended, for the supervisor, from its error: the
// watch's context done, a poll loop's time to try events again, events
// that cannot be had, or any other failure.
func endOf(ctx context.Context, err error) decide.LoopEnd {
	switch {
	case ctx.Err() != nil:
		return decide.EndStopped
	case errors.Is(err, errTryEvents):
		return decide.EndTryEvents
	case osfile.EventsUnavailable(err):
		return decide.EndEventsUnavailable
	}
	return decide.EndFailed
}

// runLoop runs the launch's loop until it ends, once the supervisor has
// said how its start is told and whether it polls besides its events.
// With no loop, the launch's read is judged by a decider of its own and
// handed on as that decider says, so that updates still flow, at the
// pace of the backoff, while no watch can be armed, and none unjudged.
func runLoop(ctx context.Context, t target, l launch, out rearmSink, look <-chan struct{}, s *decide.Supervisor) error {
	if ctx.Err() != nil {
		l.close()
		return nil
	}
	if l.l == nil {
		forward(out, judgeAlone(t, l.read), l.read)
		return l.err
	}
	defer l.l.close()
	st := s.Started(decide.LoopStart{Polls: !l.l.events(), Fallback: l.l.kind == pollFallback, Remote: l.l.remoteFS})
	if st.PollRemote {
		l.l.pollRemote = true
		l.l.tellWatching()
	}
	out.started(st, l.l.remoteFS)
	return l.l.run(ctx, l.read, look)
}

// judgeAlone is the judgment a loop's first read would get, for a read
// made where there is no loop (the notifier could not be created) or none
// running yet (Watch's baseline): that of a decider of its own, which
// watches nothing.
func judgeAlone(t target, r reading) decide.Forward {
	d := decide.New(decide.Config{Window: t.opts.quiet, Paths: t.subj.paths(), Inodes: platformInodes{},
		RetryMin: t.opts.backoffMin, RetryMax: t.opts.backoffMax, Seed: randomSeed()})
	now := time.Now()
	d.Step(decide.Input{Kind: decide.InputOpen, Now: now})
	return d.Step(decide.Input{Kind: decide.InputStart, Read: factsOf(t.subj, &r), Now: now}).Forward
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
