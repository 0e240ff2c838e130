package decide

import "time"

// MaxWaitFactor bounds how long a file that is written without pause can
// delay a read: MaxWaitFactor windows after the first write (the cap).
const MaxWaitFactor = 10

// CapGap is how long writes must pause, once a wait has passed its cap,
// for the file to be read: longer than one writer's writes are apart, so
// that the cap reads between writers, not inside one. Writes that never
// pause so long are read a pause after the cap.
const CapGap = 5 * time.Millisecond

// capRetries is how many times a read at the cap that the kernel says
// a writer holds is made again CapGap apart, to fall between writers:
// writes that never let up still leave gaps between one writer's close and
// the next's open, and a read asked of in one is whole. Past it, the read
// is made again a window apart, until one falls between writers.
const capRetries = 20

// HeldOpenWindow is how long a writer heard writing, that keeps the file
// open, must go without a write before the file is read, where the kernel
// reports writers' closes (the quiet window, if longer); and how long a file
// found empty at a writer's close is confirmed, for the next writer to begin
// (see emptyClosed). A producer behind a shell redirect holds the file until
// it is done, however long it pauses between writes, and the file is only
// ever read half done if a pause outlasts this. Measured (strace of the
// writes, on the 2-core development machine; docs/semantics.md has the
// table): helm, kubectl, envsubst and tee write what they make at once, but
// two of them behind one redirect pause for the second's start, 40 to 90 ms;
// curl and envsubst write in 4 KiB blocks, so that a handler over loopback
// sending a section (about 700 bytes) every 20, 50 or 100 ms is written in
// pauses of up to 150, 350 and 700 ms; tee passes its input's pauses on.
// One second covers all of these with room for a loaded machine, and still
// reads a writer that keeps the file open for good (test code, long-lived
// writers) well within what tests of one wait (siemens/wfx polls for 5 s);
// ten of them (the cap) are MaxWriterWait. The writer's close, when it
// comes, reads the file again. Writers that close are read at their close,
// renames and swaps on their event: this window delays neither.
const HeldOpenWindow = time.Second

// UnheardWriterPause is how long a writer that no event told of, but that
// the file's times say may still be at work, is given before the file is
// read, where closes are reported (the quiet window, if shorter): the file
// is one the path leads to only now (a link retargeted, a directory
// swapped in or made again), written before a watch could hear it. Such a
// file was most likely finished before it was swapped in, and is read so
// soon after, so that swaps are not held back; a write heard from it makes
// it a heard writer, given HeldOpenWindow. It is also how lately a file
// read at the end of a wait must have been written for the wait to go on
// (its writes' events had not come yet: they come within milliseconds).
const UnheardWriterPause = 25 * time.Millisecond

// MaxWriterWait bounds how long a file found empty while its writer holds
// it open delays a read: long enough for a slow producer behind a shell
// redirect to start writing, short enough that a writer that never writes
// (a misbehaving one, or an mmap) does not hold the update back for good.
// Its close, where the kernel reports it, reads the file again; where it
// does not, the file is read again, and the kernel asked again, a window
// apart (see emptyWhileOpen).
const MaxWriterWait = 10 * time.Second

// waitState is what the watch waits for before it reads the file, or
// accepts what it read.
type waitState uint8

const (
	// waitNone: nothing to wait for; reads are accepted.
	waitNone waitState = iota
	// waitConfirm: a read found the file missing or empty, which is more
	// likely the middle of an update than its end. That is reported or
	// delivered when the window ends, confirmed (HeldOpenWindow for a file found
	// empty at a writer's close: see emptyClosed), unless an event first
	// shows it was the middle of an update. A writer's close does not end
	// it: its read is made, and ends it only if it finds the file written.
	waitConfirm
	// waitQuiet: in-place writes are under way, and nothing will say when
	// they end. The file is read once a window passes without a write, or
	// from the cap on (MaxWaitFactor windows after the first one) at the
	// first CapGap between writes, so that a file written without pause
	// is still read.
	waitQuiet
	// waitStatChanged: as waitQuiet, but started with no write heard: a
	// re-check saw the stat change, or, where closes are not reported, a
	// file was found written so lately that a writer no event told of
	// may be at it. An event that shows a rename or a swap ends it, since
	// those are read at once.
	waitStatChanged
	// waitClose: in-place writes are under way and the kernel reports the
	// writer's close, which ends the wait. A writer heard writing that
	// keeps the file open is read once it has gone HeldOpenWindow without
	// a write (or, from MaxWaitFactor such windows after the first,
	// CapGap); one no event told of, after UnheardWriterPause.
	waitClose
	// waitEmptyOpen: the file is empty and its writer holds it open (a
	// slow producer behind a shell redirect, not started yet): only its
	// close, its first write, or MaxWriterWait ends the wait. Where no
	// close is told, it fires a window on, as a writer's pause, to ask the
	// kernel again (see emptyWhileOpen).
	waitEmptyOpen
)

var waitStateNames = [...]string{"none", "confirm", "quiet", "stat-changed", "close", "empty-open"}

func (s waitState) String() string { return waitStateNames[s] }

// readAfter is what a read comes after: what the watch knows, when it
// reads, of the writers of the file, and so how far what it reads is
// accepted.
type readAfter uint8

const (
	// afterEvent: an event asked for the read. A missing or empty file is
	// more likely the middle of an update than its end: it is confirmed
	// before it is accepted (waitConfirm).
	afterEvent readAfter = iota
	// afterWait: a wait is over; what is read is what the file is.
	afterWait
	// afterQuiet: in-place writes went a window without another, where no
	// close will say the writer is done: accepted as a wait's end is, but
	// an empty file, which is what a writer's truncation leaves, is
	// confirmed for a window more (its writes' events may not have come).
	afterQuiet
	// afterClose: the writer closed the file; what is read is what it
	// wrote, once no later writer is known to have started.
	afterClose
	// afterPause: the writer paused but still holds the file open; what
	// it wrote so far is read, but an empty file waits on for its close.
	// (A file that changed with no write heard since the wait began has
	// no heard writer holding it: it is read as afterQuiet.)
	afterPause
	// afterLongestWait: an empty file's writer held it open for
	// MaxWriterWait without writing: what the file holds now is accepted,
	// however empty, whoever holds it open still.
	afterLongestWait
	// afterCap: writes went on without pause for as long as a read may be
	// put off: what is read is what the file is, however far its writers
	// are, unless it is empty or was cut short as it was read (a writer's
	// truncation, caught in the act): that is confirmed or waited for, as
	// any other read's would be.
	afterCap
)

var readAfterNames = [...]string{"event", "wait", "quiet", "close", "pause", "longest wait", "cap"}

func (t readAfter) String() string { return readAfterNames[t] }

// endsWriterWait reports whether a read after t ends a wait for the
// writers of one file: what it concludes of them.
func (t readAfter) endsWriterWait() bool {
	return t == afterQuiet || t == afterPause || t == afterCap
}

// readWait is the watch's wait for the file's writers to finish before it is read,
// or before what was read is accepted. Its state changes only in the
// methods below, one for each thing that can happen to it; each is a
// transition of the table in wait_test.go. The time is handed in, and the
// loop's timer is set to its deadline.
type readWait struct {
	window     time.Duration // the quiet window; zero turns waiting off
	state      waitState
	deadline   time.Time // when the wait ends; zero in waitNone
	start      time.Time // when the wait began
	why        Reason    // what started it
	movedStart time.Time // the start of a stat-changed wait that moved on to another file in this refresh, for the cap: see moved
	carried    bool      // start is a moved wait's: a stat change's, which a heard write does not inherit
	heard      bool      // in waitClose, or waitQuiet after closeLost: a write or a creation of the file was heard, so that its writer may be a slow producer holding it open
	capRetried int       // reads at the cap made again since the wait began (retryAtCap)
	firedFrom  waitState // the state the wait was in when it last fired: the cap's retry waits on in it
}

// written takes a write an event told of, at now. closes says whether the
// writer's close will be reported. It starts a wait for writes to end, or
// extends one; a confirmation becomes one.
func (w *readWait) written(why Reason, closes bool, now time.Time) { w.write(why, closes, closes, now) }

// unheardWriter starts a wait for a writer no event told of, whose close
// will be reported (see UnheardWriterPause), or extends the wait running.
func (w *readWait) unheardWriter(why Reason, now time.Time) { w.write(why, true, false, now) }

// askAgain takes the kernel's word that a writer holds the file where
// that writer's close may have come already: at a writer's close, or
// right after the file's own watch came, which a creator may have closed
// just before. Linux counts a closing writer a moment past its close's
// event, so the file is read, and the kernel asked, again a writer no
// event told of's pause later, whatever the wait was for (a heard
// writer's second, an empty file's ten).
func (w *readWait) askAgain(why Reason, now time.Time) {
	w.heard = false
	w.write(why, true, false, now)
}

// write starts or extends a wait for writes. heard says that an event told
// of them: their writer is given HeldOpenWindow to pause in.
func (w *readWait) write(why Reason, closes, heard bool, now time.Time) {
	switch {
	case w.state == waitNone || w.state == waitConfirm || w.state == waitEmptyOpen:
		w.begin(now, why, waitQuiet)
		if closes {
			w.state = waitClose
		}
		w.heard = heard
		w.deadline = now.Add(w.pause())
		return
	case closes:
		// A quiet-window wait (the re-check saw the file change) that the
		// writer's first event catches up with now waits for the writer.
		w.state = waitClose
	case w.state == waitStatChanged:
		w.state = waitQuiet
		if w.carried {
			// The burst the wait's start was carried from was renames:
			// a heard writer is another matter, and its writes get a
			// cap of their own.
			w.start, w.carried = now, false
		}
	}
	w.heard = w.heard || heard
	w.deadline = now.Add(w.delay(now))
}

// delay is how long after a write at now the wait's read is due: a pause
// later, unless that passes the cap, and then at the cap's first gap
// between writes (CapGap), or a pause after the cap.
func (w *readWait) delay(now time.Time) time.Duration {
	toCap := w.start.Add(MaxWaitFactor * w.pause()).Sub(now)
	if w.pause() <= toCap {
		return w.pause()
	}
	return max(0, min(w.pause(), toCap+w.pause(), max(toCap, CapGap)))
}

// resume takes a read, at the end of a wait for writes, that found the file
// written within the pause: their events had not come yet. The wait goes
// on from where it began, so that its cap still holds, and with what it
// had heard of its writer (fired keeps it).
func (w *readWait) resume(closes bool, now time.Time) {
	w.state = waitQuiet
	if closes {
		w.state = waitClose
	}
	w.deadline = now.Add(w.delay(now))
}

// emptyWhileOpen takes a file found empty while its writer holds it open:
// nothing is accepted until the writer closes or writes, or MaxWriterWait
// has passed since the writer began (since the last wait began, if the
// read was that wait's end). closes says whether the writer's close will
// be reported: where it will not (fsnotify), nothing would end the wait
// at that close, and the file is read again, the kernel asked again, a
// window later (fired: as a writer's pause), until MaxWriterWait.
func (w *readWait) emptyWhileOpen(why Reason, closes bool, now time.Time) {
	since := w.start
	if w.state != waitNone || since.IsZero() {
		since = now
	}
	w.begin(since, why, waitEmptyOpen)
	w.deadline = since.Add(MaxWriterWait)
	if !closes {
		w.deadline = earliest(w.deadline, now.Add(w.window))
	}
	if w.deadline.Before(now) {
		w.deadline = now
	}
}

// earliest returns the earlier of a and b.
func earliest(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// statChanged starts a wait for writes that nothing but a changed stat
// suggests, unless writes are awaited already. A wait already running is
// not extended: the stat differs from the last read until the wait ends and
// reads, so extending would put every polled update off to the wait's cap.
// One that follows a wait moved on to another file in the same refresh
// (moved) keeps that wait's start, so that the cap bounds a burst of files
// renamed over the path, each waited for so, as it bounds a burst of
// writes; a write heard in it then starts the cap afresh (see written).
func (w *readWait) statChanged(why Reason, now time.Time) {
	if w.blocksReads() {
		return
	}
	w.written(why, false, now)
	w.state = waitStatChanged
	if !w.movedStart.IsZero() {
		w.start, w.carried = w.movedStart, true
		w.deadline = now.Add(w.delay(now))
	}
}

// swapSeen takes an event that shows the change to be a rename or a swap,
// which is read at once: it ends a stat-changed wait, as if the re-check
// had not come first.
func (w *readWait) swapSeen() {
	if w.state == waitStatChanged {
		w.stop()
	}
}

// moved takes a path that leads to another file than the one whose writes
// a wait is for: the wait is over. A confirmation goes on: its end reads
// whatever the path leads to then. A stat-changed wait's start is kept for
// such a wait on the new file in the same refresh (refreshDone forgets it):
// a wait for writes heard, or for a writer's close, is no stat change, and
// the next file's writers get a wait of their own.
func (w *readWait) moved() {
	if w.blocksReads() {
		start, statChanged := w.start, w.state == waitStatChanged
		w.stop()
		if statChanged {
			w.movedStart = start
		}
	}
}

// refreshDone ends a refresh of the path: a wait that moved on in it is no
// longer carried on by a stat change.
func (w *readWait) refreshDone() { w.movedStart = time.Time{} }

// closeLost turns a wait for a writer into a wait for quiet: events were
// lost, and the writer's close or writes may have been among them. A
// writer heard writing keeps its window: a burst of writes (a tool writing
// line by line) is what overflows a watch's queue, and such a writer may
// be a producer about to pause (helm template a; helm template b) > f. A
// close that comes after the loss still reads at once.
func (w *readWait) closeLost(now time.Time) {
	if w.state == waitClose || w.state == waitEmptyOpen {
		w.state = waitQuiet
		w.deadline = now.Add(w.pause())
	}
}

// writerClosed takes a writer's close. It ends any wait but a
// confirmation: what the writer wrote is all there. A confirmation is left
// to the close's read: it ends it if it finds the file written (see
// accepted), and a file still empty was emptied by a writer that may be
// followed by another (see emptyClosed).
func (w *readWait) writerClosed() {
	if w.state != waitConfirm {
		w.stop()
	}
}

// emptyClosed takes a file found empty at its writer's close, at now, with
// no later writer known. The close says that writer is done, not that the
// file is meant to be empty: it is more often emptied to be written again
// (truncate -s 0 f && cat new >> f; : > f; echo ... >> f), by a writer
// that takes a moment to start. It is confirmed only once no writer has
// appeared for as long as one that holds the file open may pause
// (HeldOpenWindow, or the quiet window if longer): a write in that time
// makes the confirmation a wait for that writer, whose close reads the
// file whole; a file that stays empty so long is delivered at its end.
// A confirmation running already is put off to that long after this close,
// but never past MaxWriterWait from its start.
func (w *readWait) emptyClosed(why Reason, now time.Time) {
	wait := max(w.window, HeldOpenWindow)
	switch w.state {
	case waitNone:
		w.begin(now, why, waitConfirm)
		w.deadline = now.Add(wait)
	case waitConfirm:
		w.deadline = now.Add(min(wait, max(0, w.start.Add(MaxWriterWait).Sub(now))))
	}
}

// confirm starts a confirmation of a missing or empty file, unless a wait
// is running: its end reads anyway, and events during it must not postpone
// a real problem's report.
func (w *readWait) confirm(why Reason, now time.Time) {
	if w.state != waitNone {
		return
	}
	w.begin(now, why, waitConfirm)
	w.deadline = now.Add(w.window)
}

// accepted takes a read that is accepted: it ends a confirmation, which
// the read has made moot.
func (w *readWait) accepted() {
	if w.state == waitConfirm {
		w.stop()
	}
}

// blocksReads reports whether in-place writes are under way: a read now
// could see them half done.
func (w *readWait) blocksReads() bool {
	return w.state != waitNone && w.state != waitConfirm
}

// fired ends the wait, its deadline reached at now. It returns what started
// it, and what the read it calls for comes after. The wait's
// start is kept, for emptyWhileOpen.
func (w *readWait) fired(now time.Time) (Reason, readAfter) {
	t := afterWait
	switch {
	case w.state == waitEmptyOpen && now.Sub(w.start) < MaxWriterWait:
		// Where no close is reported, the file is read again before
		// MaxWriterWait: a writer's pause, at which an empty file its
		// writer still holds waits on (see emptyWhileOpen).
		t = afterPause
	case w.state == waitEmptyOpen:
		// The writer was given MaxWriterWait: what the file holds now is
		// accepted, however empty.
		t = afterLongestWait
	case w.blocksReads() && now.Sub(w.start) >= MaxWaitFactor*w.pause():
		t = afterCap
	case w.state == waitClose:
		t = afterPause
	case w.state == waitQuiet || w.state == waitStatChanged:
		t = afterQuiet
	}
	w.firedFrom = w.state
	w.state, w.deadline = waitNone, time.Time{}
	return w.why, t
}

// retryAtCap takes a read at the cap that found a writer at work on the
// file, by the kernel's word: it is made again CapGap later, to fall
// between writers rather than inside one, and a window later once
// capRetries such reads have all fallen inside one (writes that never
// let up: a read is made again at a slower pace until one falls between
// writers, and none made inside one is accepted). The wait keeps its
// start, what it heard, and the state it fired from (running, or, as it
// always is when the cap's read is judged, just fired), so that it fires
// as the cap's again, by its own cap: a wait for a writer no event told
// of has a shorter one than a quiet wait's.
func (w *readWait) retryAtCap(now time.Time) {
	s := w.state
	if s == waitNone {
		s = w.firedFrom
	}
	if s != waitQuiet && s != waitStatChanged && s != waitClose {
		s = waitQuiet
	}
	gap := CapGap
	if w.capRetried >= capRetries {
		gap = max(w.window, CapGap)
	}
	w.state, w.deadline = s, now.Add(gap)
	w.capRetried++
}

// stop ends any wait.
func (w *readWait) stop() {
	w.state, w.deadline = waitNone, time.Time{}
}

func (w *readWait) begin(at time.Time, why Reason, s waitState) {
	w.start, w.why, w.state, w.carried, w.heard, w.capRetried = at, why, s, false, false, 0
}

// pause is how long writes must pause for the wait to end: where closes
// are reported, a heard writer that holds the file open gets
// HeldOpenWindow (a slow producer behind a redirect pauses that long), as
// one whose close may have been lost with other events does (see
// closeLost), and one no event told of UnheardWriterPause; elsewhere the
// quiet window.
func (w *readWait) pause() time.Duration {
	switch {
	case (w.state == waitClose || w.state == waitQuiet) && w.heard:
		return max(w.window, HeldOpenWindow)
	case w.state == waitClose:
		return min(w.window, UnheardWriterPause)
	}
	return w.window
}

// writerPause is how long a writer no event told of must pause before what
// it wrote is read with no close to say it is done, and how lately a file
// found at the end of a writer's wait must have been written for the wait
// to go on: UnheardWriterPause where closes are reported (closes; or the
// window, if shorter), the quiet window elsewhere. (A writer heard writing
// is given HeldOpenWindow: see pause.)
func (w *readWait) writerPause(closes bool) time.Duration {
	if closes {
		return min(w.window, UnheardWriterPause)
	}
	return w.window
}

// mayRead says whether a read of why and t is to be made now: not while
// in-place writes are under way and it would not end the wait for them
// (the wait's end, or the later writer's close, reads).
func (w *readWait) mayRead(why Reason, t readAfter, unwatched bool) (readOrder, bool) {
	o := readOrder{why: why, after: t, unwatched: unwatched}
	return o, !(w.blocksReads() && (t == afterEvent || t == afterClose))
}
