package live

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// How often StartWait loads again with no change told: the safety net for
// what no watch tells of (a provider that cannot watch a path that does not
// exist yet, an environment variable). A keepwatch provider with
// file.WithWaitForPath tells of its file's arrival at once.
const (
	firstRetry = 100 * time.Millisecond
	maxRetry   = 2 * time.Second
)

// errClosed ends a StartWait that Close or Shutdown interrupted.
var errClosed = errors.New("closed while it waited for a good config")

// startWait watches everything in s.watch, then loads until a config is
// published: at once, on each call back of a watched provider, and with
// none, after firstRetry, backing off to every maxRetry. Its attempts are not rejections. It gives up when
// ctx is done, or the engine is closed, and leaves the engine new then, so
// that it may be started again.
func (e *engine[T]) startWait(ctx context.Context, s spec[T]) error {
	if err := s.check(); err != nil {
		return err
	}
	if err := e.begin(s); err != nil {
		return err
	}
	watched := make([]bool, len(s.watch))
	began, attempts, logged := time.Now(), 0, ""
	retry := time.NewTimer(firstRetry)
	defer retry.Stop()
	delay := firstRetry
	for {
		attempts++
		err := e.attempt(watched, attempts, began)
		switch {
		case err == nil:
			if len(s.watch) == 0 {
				e.log(slog.LevelWarn, "keepwatch: config watches nothing: it reloads only when Reload is called")
			}
			return nil
		case errors.Is(err, errClosed):
			e.unwatchAll(watched)
			return named(e.label, err)
		case err.Error() != logged:
			// Once for each reason it waits: a file that is missing, then
			// one that does not parse.
			logged = err.Error()
			e.log(slog.LevelWarn, "keepwatch: no good config yet, waiting for one", slog.Any("error", err))
		}
		select {
		case <-ctx.Done():
			return e.giveUp(ctx, watched)
		case <-e.wake:
		case <-retry.C:
			delay = min(2*delay, maxRetry)
		}
		retry.Reset(delay)
	}
}

// begin takes the owner's fields and marks the engine starting.
func (e *engine[T]) begin(s spec[T]) error { return e.to(stateStarting, s) }

// attempt watches what is not watched yet, then loads, builds, validates
// and publishes the config. The watches come first, so that a change made
// after the load read is told, and loads again. A Watch that fails (a
// keepwatch provider without file.WithWaitForPath, or koanf's stock one,
// on a path that is not there yet) is tried again at the next attempt; a
// wait that Close ended ends before it, so that a Watch failing every time
// cannot keep it going. It logs the config it published, and the wait
// that the attempt at began ends.
func (e *engine[T]) attempt(watched []bool, attempts int, began time.Time) error {
	if e.closed() {
		return errClosed
	}
	for i, w := range e.spec.watch {
		if watched[i] {
			continue
		}
		if err := w.Watch(e.callback(w)); err != nil {
			err = fmt.Errorf("keepwatch: %s: watch %T: %w", configText(e.label), w, err)
			e.recordFailure(err, false)
			return err
		}
		watched[i] = true
	}
	e.reloadMu.Lock()
	defer e.reloadMu.Unlock()
	if e.now() != stateStarting {
		return errClosed
	}
	if err := e.reloadLocked(reasonStart, ""); err != nil {
		return err
	}
	if attempts > 1 {
		e.loaded(slog.Int("attempts", attempts), slog.Duration("waited", time.Since(began).Round(time.Millisecond)))
	} else {
		e.loaded()
	}
	if !e.started(stateStarting) {
		return errClosed
	}
	return nil
}

// closed reports whether Close or Shutdown ended the wait.
func (e *engine[T]) closed() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.state != stateStarting
}

// giveUp ends a wait that ctx ended: what it watched is stopped, and the
// engine is new again. The error wraps both the last attempt's and ctx's.
func (e *engine[T]) giveUp(ctx context.Context, watched []bool) error {
	e.mu.Lock()
	closed := e.state == stateClosed
	if !closed {
		e.state = stateNew
	}
	e.mu.Unlock()
	e.unwatchAll(watched)
	if closed {
		return named(e.label, errClosed)
	}
	last := e.snapshotStats().LastError
	if last == nil {
		return fmt.Errorf("keepwatch: %s: no good config: %w", configText(e.label), ctx.Err())
	}
	return fmt.Errorf("%w (gave up waiting: %w)", last, ctx.Err())
}

// unwatchAll stops what a wait watched.
func (e *engine[T]) unwatchAll(watched []bool) {
	for i, w := range e.spec.watch {
		if watched[i] {
			unwatch(w)
		}
	}
}

// signal wakes a StartWait; it never blocks. Called with mu held.
func (e *engine[T]) signal() {
	select {
	case e.wake <- struct{}{}:
	default:
	}
}
