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

// settleState is what a session waits for before it reads the file, or
// believes what it read.
type settleState uint8

const (
	// settled: nothing to wait for; reads are believed.
	settled settleState = iota
	// doubting: a read found the file missing or empty. That is reported
	// or delivered when the window ends, unless an event first shows it
	// was the middle of an update.
	doubting
	// quieting: in-place writes are under way, and nothing will say when
	// they end. The file is read once a window passes without a write, or
	// maxWaitFactor windows after the first one, so that a file written
	// without pause is still read.
	quieting
	// guessing: as quieting, but started by a changed stat alone (the
	// re-check saw the file change, no event said how). An event that
	// shows a rename or a swap ends it, since those are read at once.
	guessing
	// awaitingClose: in-place writes are under way and the kernel reports
	// the writer's close, which ends the wait; nothing is read until then,
	// for at most maxWriterWait (or maxWaitFactor windows, if longer).
	awaitingClose
)

// settle is a session's wait for the file to settle. Its state changes only
// in the methods below, each a transition; the timer runs in every state
// but settled.
type settle struct {
	window time.Duration // the quiet window; zero turns settling off
	state  settleState
	timer  *time.Timer // nil when settled
	start  time.Time   // when the wait began
	why    Reason      // what started it
}

// writing takes a write: it starts a wait for writes to end, or extends
// one; a doubt becomes one. closes says whether the writer's close will be
// reported.
func (q *settle) writing(why Reason, closes bool) {
	now := time.Now()
	switch {
	case q.state == settled || q.state == doubting:
		q.stop()
		q.begin(now, why, quieting)
		if closes {
			q.state = awaitingClose
		}
		q.timer = time.NewTimer(q.firstWait())
	case q.state == awaitingClose:
		// A wait for the close is not extended by more writes.
	case closes:
		// A quiet-window wait (the re-check saw the file change) that the
		// writer's first event catches up with: wait for its close now.
		q.state = awaitingClose
		q.timer.Reset(max(0, q.start.Add(q.firstWait()).Sub(now)))
	default:
		q.state = quieting
		q.timer.Reset(max(0, min(q.window, q.start.Add(maxWaitFactor*q.window).Sub(now))))
	}
}

// guess starts a wait for writes that nothing but a changed stat suggests,
// unless writes are awaited already. A wait already running is not
// extended: the stat differs from the last read until the wait ends and
// reads, so extending would put every polled update off to the wait's cap.
func (q *settle) guess(why Reason) {
	if q.blocksReads() {
		return
	}
	q.writing(why, false)
	q.state = guessing
}

// swapSeen takes an event that shows the change to be a rename or a swap,
// which is read at once: it ends a guessed wait, as if the re-check had not
// come first.
func (q *settle) swapSeen() {
	if q.state == guessing {
		q.stop()
	}
}

// closeLost turns a wait for a writer's close into a wait for quiet:
// events were lost, and the close may have been among them.
func (q *settle) closeLost() {
	if q.state == awaitingClose {
		q.state = quieting
		q.timer.Reset(q.window)
	}
}

// writerClosed takes a writer's close. It ends any wait, and reports
// whether there was one: what the writer wrote is all there. That ends a
// doubt too: a file created empty and closed so is empty on purpose.
func (q *settle) writerClosed() bool {
	if q.state == settled {
		return false
	}
	q.stop()
	return true
}

// doubt starts a doubt, unless a wait is running: its end reads anyway, and
// events during it must not postpone a real problem's report.
func (q *settle) doubt(why Reason) {
	if q.state != settled {
		return
	}
	q.begin(time.Now(), why, doubting)
	q.timer = time.NewTimer(q.window)
}

// believed takes a read that is believed: it ends a doubt, which the read
// has dispelled.
func (q *settle) believed() {
	if q.state == doubting {
		q.stop()
	}
}

// blocksReads reports whether in-place writes are under way: a read now
// could see them half done.
func (q *settle) blocksReads() bool {
	return q.state == quieting || q.state == guessing || q.state == awaitingClose
}

// C fires when the wait is over; then call fired.
func (q *settle) C() <-chan time.Time {
	if q.timer == nil {
		return nil
	}
	return q.timer.C
}

// fired ends the wait whose timer fired, and returns what started it.
func (q *settle) fired() Reason {
	q.state, q.timer = settled, nil
	return q.why
}

// stop ends any wait.
func (q *settle) stop() {
	if q.timer != nil {
		q.timer.Stop()
	}
	q.state, q.timer = settled, nil
}

func (q *settle) begin(now time.Time, why Reason, s settleState) {
	q.start, q.why, q.state = now, why, s
}

func (q *settle) firstWait() time.Duration {
	if q.state == awaitingClose {
		return max(maxWriterWait, maxWaitFactor*q.window)
	}
	return q.window
}
