package file

import (
	"context"
	"time"

	"github.com/keepwatch/file/internal/decide"
	"github.com/keepwatch/file/internal/events"
)

// How a loop waits for what it takes in: its notifier's events and errors,
// its timers (the decider's wake-up, the re-check's tick, a poll loop's
// retry of events) and the requests to look now. On its channels, or,
// where its notifier has one, on a bell (events.Bell).

// run hands first, the read made when the loop was opened, to the
// decider, then takes events, and requests to look now from look, until
// the loop fails or ctx is done; it returns nil only in the latter case.
func (l *watchLoop) run(ctx context.Context, first reading, look <-chan struct{}) error {
	l.timer = time.NewTimer(time.Hour)
	l.timer.Stop()
	defer l.timer.Stop()
	l.read = first
	if err := l.carryOut(l.step(decide.Input{Kind: decide.InputStart, Read: factsOf(l.t.subj, &first), Now: time.Now()})); err != nil {
		return err
	}
	return l.loop(ctx, look)
}

// loop takes events, timers and requests to look until the loop fails or
// ctx is done; it returns nil only in the latter case. It waits on the
// notifier's bell where it has one (loopOnBell), on its channels elsewhere.
func (l *watchLoop) loop(ctx context.Context, look <-chan struct{}) error {
	if b, ok := l.n.(events.Belled); ok && b.Bell() != nil && l.tryEvents == nil {
		l.out.waitsOn(b.Bell())
		defer l.out.waitsOn(nil)
		return l.loopOnBell(ctx, look, b.Bell())
	}
	var (
		tick    <-chan time.Time
		recheck *time.Timer
		every   = l.recheckEvery()
	)
	if every > 0 {
		recheck = time.NewTimer(untilTick(every))
		defer recheck.Stop()
		tick = recheck.C
	}
	var retry <-chan time.Time
	if l.tryEvents != nil {
		retry = l.tryEvents.C
	}
	for {
		var err error
		select {
		case <-ctx.Done():
			return nil
		case <-retry:
			return errTryEvents
		case ev, ok := <-l.n.Events():
			err = l.eventOrClosed(ev, ok)
		case err, ok := <-l.n.Errors():
			return failure(err, ok)
		case <-l.timer.C:
			err = l.timerDue(time.Now())
		case <-tick:
			recheck.Reset(untilTick(every))
			err = l.look(decide.ReasonRecheck, false)
		case <-look:
			if ctx.Err() != nil {
				return nil // stopping: the request was for a watch that is over
			}
			err = l.look(decide.ReasonRequest, true)
		}
		if err != nil {
			return err
		}
		l.tellSelfChanges()
	}
}

// loopOnBell is loop for a notifier with a bell: the loop takes what its
// channels hold, carries out its timers when their time has come, and
// otherwise waits on the bell, with a deadline for the next timer. The
// timers are its own times (l.timerAt, the re-check's tick), not the
// runtime's: the bell's deadline stands in for them.
func (l *watchLoop) loopOnBell(ctx context.Context, look <-chan struct{}, bell *events.Bell) error {
	l.onBell = true
	l.timer.Stop()
	var tickAt time.Time
	every := l.recheckEvery()
	if every > 0 {
		tickAt = time.Now().Add(untilTick(every))
	}
	for {
		var err error
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-l.n.Events():
			err = l.eventOrClosed(ev, ok)
		case err, ok := <-l.n.Errors():
			return failure(err, ok)
		case <-look:
			if ctx.Err() != nil {
				return nil
			}
			err = l.look(decide.ReasonRequest, true)
		default:
			now := time.Now()
			switch {
			case due(l.timerAt, now):
				err = l.timerDue(now)
			case due(tickAt, now):
				tickAt = now.Add(untilTick(every))
				err = l.look(decide.ReasonRecheck, false)
			default:
				bell.Wait(earliest(l.timerAt, tickAt))
				continue
			}
		}
		if err != nil {
			return err
		}
		l.tellSelfChanges()
	}
}

// due reports whether the time at, if set, has come by now.
func due(at, now time.Time) bool { return !at.IsZero() && !now.Before(at) }

// earliest returns the earlier of two times, a zero one being none.
func earliest(a, b time.Time) time.Time {
	if a.IsZero() || !b.IsZero() && b.Before(a) {
		return b
	}
	return a
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

// recheckEvery is the loop's re-check interval: the poll interval when it
// polls, the option's otherwise.
func (l *watchLoop) recheckEvery() time.Duration {
	if l.polls() {
		return l.t.opts.pollInterval()
	}
	return l.t.opts.recheck
}

// eventOrClosed hands the decider ev, taken from the notifier's events,
// or reports that the channel closed (ok false).
func (l *watchLoop) eventOrClosed(ev decide.Event, ok bool) error {
	if !ok {
		return events.ErrEventsClosed
	}
	return l.event(ev)
}

// failure is what ends the loop when its notifier reports err, or closes
// its errors (ok false).
func failure(err error, ok bool) error {
	if !ok {
		return events.ErrErrorsClosed
	}
	return err
}

// timerDue tells the decider that the time it asked to be woken at has come.
func (l *watchLoop) timerDue(now time.Time) error {
	l.timerAt = time.Time{}
	return l.carryOut(l.step(decide.Input{Kind: decide.InputTimer, Now: now}))
}
