package file

import "time"

// maxWaitFactor bounds how long a file that is written without pause can
// delay a read: maxWaitFactor quiet windows after the first write.
const maxWaitFactor = 10

// maxWriterWait bounds how long a writer that keeps the file open can delay
// a read, where the kernel reports writers' closes: long enough for a slow
// producer behind a shell redirect, short enough that a writer that never
// closes (a misbehaving one, or an mmap) does not hold the update back for
// good. Its close, when it comes, reads the file again.
const maxWriterWait = 10 * time.Second

// settle is a session's wait for the file to settle before it is read or
// believed. It is one of two kinds:
//
//   - writing: in-place writes are under way. Where the kernel reports a
//     writer's close, nothing is read until the writer closes the file, or
//     for at most maxWriterWait (or maxWaitFactor windows, if longer).
//     Elsewhere, nothing is read until a window passes without a write, or
//     maxWaitFactor windows after the first one, so that a file written
//     without pause is still read.
//   - doubt: a read found the file missing or empty. That is reported or
//     delivered when the window ends, unless an event first shows it was the
//     middle of an update.
type settle struct {
	window     time.Duration // the quiet window; zero turns settling off
	timer      *time.Timer   // nil when not waiting
	start      time.Time     // when the wait began
	why        reason        // what started it
	writes     bool          // the kind: writing, or doubt
	untilClose bool          // writing, and the writer's close will end it
	guessed    bool          // writing, on a changed stat alone: no write seen
}

// writing starts a wait for writes to end, or extends one; a doubt becomes
// one. closes says whether the writer's close will be reported; a wait for
// a close is not extended by more writes.
func (q *settle) writing(why reason, closes bool) {
	now := time.Now()
	q.guessed = false
	if q.timer == nil || !q.writes {
		q.stop()
		q.start, q.why, q.writes, q.untilClose = now, why, true, closes
		q.timer = time.NewTimer(q.firstWait())
		return
	}
	switch {
	case q.untilClose:
		return
	case closes:
		// A quiet-window wait (the re-check saw the file change) that the
		// writer's first event catches up with: wait for its close now.
		q.untilClose = true
		q.timer.Reset(max(0, q.start.Add(q.firstWait()).Sub(now)))
		return
	}
	q.timer.Reset(max(0, min(q.window, q.start.Add(maxWaitFactor*q.window).Sub(now))))
}

// guess starts a wait for writes that nothing but a changed stat suggests
// (the re-check found the file changed, no event said how), unless one is
// running. A wait already running is not extended: the stat differs from
// the last read until the wait ends and reads, so extending would put every
// polled update off to the wait's cap.
func (q *settle) guess(why reason) {
	if q.blocksReads() {
		return
	}
	q.writing(why, false)
	q.guessed = true
}

// dropGuess ends a guessed wait: an event has shown the change to be a
// rename or a swap, which is read at once, as it would have been had the
// re-check not come first.
func (q *settle) dropGuess() {
	if q.timer != nil && q.writes && q.guessed {
		q.stop()
	}
}

// closeLost turns a wait for a writer's close into a wait for quiet:
// events were lost, and the close may have been among them.
func (q *settle) closeLost() {
	if q.timer == nil || !q.untilClose {
		return
	}
	q.untilClose = false
	q.timer.Reset(q.window)
}

func (q *settle) firstWait() time.Duration {
	if q.untilClose {
		return max(maxWriterWait, maxWaitFactor*q.window)
	}
	return q.window
}

// writerClosed ends a wait, if one runs, and reports whether it did: the
// writer closed the file, so what it wrote is all there. That ends a doubt
// too: a file created empty and closed so is empty on purpose.
func (q *settle) writerClosed() bool {
	if q.timer == nil {
		return false
	}
	q.stop()
	return true
}

// doubt starts a doubt, unless a wait is running: its end reads anyway, and
// events during it must not postpone a real problem's report.
func (q *settle) doubt(why reason) {
	if q.timer != nil {
		return
	}
	q.start, q.why, q.writes = time.Now(), why, false
	q.timer = time.NewTimer(q.window)
}

// clearDoubt ends a doubt that a read has just dispelled.
func (q *settle) clearDoubt() {
	if !q.writes {
		q.stop()
	}
}

// blocksReads reports whether in-place writes are under way: a read now
// could see them half done.
func (q *settle) blocksReads() bool { return q.timer != nil && q.writes }

// C fires when the wait is over; then call fired.
func (q *settle) C() <-chan time.Time {
	if q.timer == nil {
		return nil
	}
	return q.timer.C
}

// fired ends the wait and returns what started it.
func (q *settle) fired() reason {
	q.timer = nil
	return q.why
}

func (q *settle) stop() {
	if q.timer != nil {
		q.timer.Stop()
		q.timer = nil
	}
}
