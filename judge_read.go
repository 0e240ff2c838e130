package file

import (
	"io/fs"
	"time"
)

// readOrder is a read the judge asks for: why, and how far what it finds
// is to be believed. fresh says it is made where no watch told of writers
// until now.
type readOrder struct {
	why   Reason
	trust trust
	fresh bool
}

// refreshing takes a new resolution of the path, made for a read of why
// and t, and says whether to read, and how. homeWatched and unheard are
// facts of the watch set: whether the file's directory is watched, and
// whether a file the resolution led to was not wanted before it (events on
// it went to no one until then).
func (j *judge) refreshing(why Reason, t trust, homeWatched, unheard bool, f facts) (readOrder, bool) {
	if j.wait.blocksReads() && j.writer.elsewhere(j.view) {
		// A wait for the writers of a file the path no longer leads to (a
		// rename brought another, the file went): their close may never
		// be told here. What is read now is judged afresh.
		j.wait.moved()
	}
	// Whatever an event or a wait said, it said nothing of writers in a
	// directory no watch covered: a close may even have been the last
	// file's, in a directory deleted since. A file the resolution did not
	// reach, but the read does, appeared since; one the last refresh
	// found only once its watches were added, was written unwatched; one
	// the resolution wants only now was written unheard.
	fresh := j.due.fresh || !homeWatched || len(j.view.files) == 0 || unheard
	j.due.fresh = false
	switch {
	case t.endsWriterWait() && j.writer.elsewhere(j.view):
		// The wait that ended was for the writer of a file the path no
		// longer leads to: what it says of that writer says nothing of
		// this file, which came where no event told of it (renamed in
		// before the watch that would have seen it was added). It is
		// judged as any file found where no watch heard its writer.
		t, fresh = doubtful, true
	case t == heldOpen && j.writer.changedUnheard(fileNowOrNone(j.paths, f)):
		// The wait ended taking its writer to hold the file open, but
		// the file changed with no write heard from it: no heard writer
		// is at work on what is there (its events were lost, or it is
		// another file that took the freed inode's number). It is read as
		// a quiet window's end: an empty file is doubted, not held for a
		// close, and the wait's cap still holds.
		t = quieted
	}
	return j.wait.mayRead(why, t, fresh)
}

// refreshDone ends a refresh: a wait that moved on in it is no longer
// carried on by a guess.
func (j *judge) refreshDone() { j.wait.refreshDone() }

// verdict is what the judge makes of a read.
type verdict uint8

const (
	verdictHold    verdict = iota // not believed: a wait (or the doubt) it began reads again
	verdictBelieve                // handed on: what the file is
	verdictRetry                  // failed for a reason of the process: told of, and made again
	verdictAsk                    // believed if no later writer began: see laterWriter
)

var verdictNames = [...]string{"held", "believed", "retry", "ask the queue"}

func (v verdict) String() string { return verdictNames[v] }

// read judges a read made for o at now. via is the file the resolution
// made just before it found (nil if not known). It says how far the read
// is believed; verdictAsk leaves that to laterWriter, once the events the
// kernel queued by now are taken.
//
// A missing or empty file that an event's read found is doubted rather
// than believed: either is far more often the middle of an update (a
// remove-then-create swap, a file created before it is written) than its
// end. It is handed on only if it lasts a quiet window, and any event in
// between reads again at once. A file that a writer holding it open has
// left empty is not believed before its close. What a writer's close
// reads is handed on only if no later writer had begun by then. A read
// that failed for a reason of the process, not of the file, is told of and
// retried.
//
// A fresh read was made where no watch told of writers until now (see
// refreshing): a file it finds written lately is given a window, as one
// that an event read is where no close will be reported. A read found
// elsewhere than the resolution's file is made fresh in o, for a retry.
func (j *judge) read(r *reading, o *readOrder, via fs.FileInfo, f facts, now time.Time) verdict {
	if via != nil && r.err == nil && !sameFile(r.c.info, via) {
		// The path led to another file by the time it was read than the
		// resolution just made found (a link put in its place): one no
		// watch may have covered while it was written.
		o.fresh = true
	}
	t, fresh := o.trust, o.fresh
	j.last.readSig = r.c.sig
	if processError(r.err) {
		return verdictRetry
	}
	waits := j.wait.window > 0
	doubted := j.doubt(*r) && waits
	lately := func(d time.Duration) bool { return waits && r.err == nil && r.c.writtenWithin(d, f, now) }
	switch {
	case t == heldOpen && doubted && r.err == nil:
		j.writer.begin(r.c.info, j.view.fileOf(r), j.caps.files, f, j.due.drop)
		j.wait.emptyWhileOpen(r.why, now)
		return verdictHold
	case (t == doubtful || t == heldOpen || (t == quieted || t == capped) && r.err == nil) && doubted:
		// A cap's read, too: the file it finds empty is most likely a
		// writer's truncation, caught because writes went on for so long.
		j.wait.doubt(r.why, now)
		return verdictHold
	case r.err == nil && r.c.torn && waits:
		// A writer truncated the file as it was read: wait for it, as for
		// one no event told of (its event may not have come yet). Even at
		// a cap: what was read is a part, and the writer is at it now.
		j.awaitUnseenWriter(r.why, r.c.info, j.view.fileOf(r), f, now)
		return verdictHold
	case t == capped:
	case (t == believed || t == quieted) && lately(j.wait.window), t == heldOpen && lately(j.wait.writerPause(j.caps.closes)):
		// The wait was quiet only because the writes' events had not come
		// yet: the file says it was written within it. A file found empty
		// so is given a quiet window, not a wait for its writer's close:
		// nothing says one holds it open (a rename may have brought it, or
		// a read before took its writer's close), and a close that never
		// comes would hold it back for maxWriterWait.
		j.writer.begin(r.c.info, j.view.fileOf(r), j.caps.files, f, j.due.drop)
		j.wait.resume(j.caps.closes && !doubted, now)
		return verdictHold
	case (fresh || t == doubtful && !j.caps.closes && r.why != ReasonStart) && lately(j.wait.writerPause(j.caps.closes)):
		// A writer no event told of, or whose close no event will tell
		// of, may still be at it: it is given the pause a writer that
		// keeps the file open gets. (The read that starts a watch is its
		// baseline, whatever it finds.) An empty file is doubted instead:
		// its writer, if one holds it open, is heard from now on (its
		// writes, its close), and nothing says one does.
		if doubted {
			j.wait.doubt(r.why, now)
			return verdictHold
		}
		j.awaitUnseenWriter(r.why, r.c.info, j.view.fileOf(r), f, now)
		return verdictHold
	case waits && j.events:
		return verdictAsk
	}
	return verdictBelieve
}

// closedEmpty says what becomes of a read that laterWriter found no later
// writer for: a writer's close (t) that leaves the file empty, no later
// writer known yet, was most often emptying the file to write it again
// (truncate, then append), and the next writer has yet to begin. It is
// doubted until no writer has appeared for a while (readWait.emptyClosed).
func (j *judge) closedEmpty(r *reading, t trust, now time.Time) verdict {
	if t == closedByWriter && r.err == nil && j.wait.window > 0 && j.doubt(*r) {
		j.wait.emptyClosed(r.why, now)
		return verdictHold
	}
	return verdictBelieve
}

// believe takes a read the judge believes: it ends a doubt, and is what
// later reads and stats are compared with.
func (j *judge) believe(r *reading) {
	j.wait.believed()
	j.heldBack = time.Time{} // a read believed ends the holding back, however it was made (a cap's)
	j.last.sig, j.last.info = r.c.sig, r.c.info
}

// awaitUnseenWriter waits for a writer that may be at work where no event
// told of it: where closes are reported, as for a writer that keeps the
// file open (its close, or its pause, reads); elsewhere, a quiet window,
// which an event showing a swap ends. info is the file it may be at work
// on.
func (j *judge) awaitUnseenWriter(why Reason, info fs.FileInfo, path string, f facts, now time.Time) {
	j.writer.begin(info, path, j.caps.files, f, j.due.drop)
	if j.caps.closes {
		j.wait.unheardWriter(why, now)
		return
	}
	j.wait.guess(why, now)
}

// laterWriter judges a read that read found believable if no later writer
// had begun by the time it was made. What an event or a writer's close
// said was whole may not be by the time it is read: the next writer may
// have truncated the file (two os.WriteFile calls in a row, a rename-over
// and then an edit in place), and the read may have found its work half
// done. The session takes every event the kernel queued by then (queued,
// judged with the facts qf) and those that came while it took them (late,
// judged with lf), and hands them here: the read is believed unless they
// tell of such a writer, and is then left to that writer's close, or its
// quiet.
//
// Writers that never let up would leave every read to the next: once they
// have held reads back for maxWaitFactor windows, what is read stands.
//
// taken, if not nil, gets what each event was taken for, for traces.
func (j *judge) laterWriter(r *reading, queued, late []event, qf, lf facts, now time.Time, taken *[]takenEvent) verdict {
	writes, gone, moved, removed := j.writer.writes, j.watchesGone, j.chainTouched, j.filesGone
	lost := false
	j.last.judging = r.c.sig
	for _, batch := range [...]struct {
		evs []event
		f   facts
	}{{queued, qf}, {late, lf}} {
		for _, ev := range batch.evs {
			k := j.event(ev, batch.f, now)
			if taken != nil && *taken != nil {
				*taken = append(*taken, takenEvent{kind: k, drops: len(j.due.drop)})
			}
			lost = lost || ev.has(opRescan) // a write may have been lost with it
		}
	}
	j.last.judging = 0
	// A watch that went since may have been the one to tell of a writer
	// where the read was made (a directory deleted and made again, and
	// written in at once): the read is made again, from what is watched.
	lost = lost || j.watchesGone != gone
	// A name on the way that changed since the resolution the read went
	// by: the read may have found a file elsewhere than where the watches
	// are. It is made again, by a new resolution.
	lost = lost || j.chainTouched != moved
	if j.watchesGone != gone || j.chainTouched != moved {
		// Made again as where no watch heard the writers: the watches in
		// place by then may have come after them. Made again whatever the
		// events said of themselves: a touch of a directory on the way
		// asks for nothing, yet the read it makes doubtful is not believed.
		j.due.look, j.due.fresh = true, true
	}
	// The file read was removed since (not the one a rename put it in
	// place of, whose removal comes after it): the doubt its removal began
	// is not for this read to end, and its end reads again.
	lost = lost || j.filesGone != removed && r.gone(j.paths, lf)
	if j.writer.writes == writes && !lost {
		j.heldBack = time.Time{}
		return verdictBelieve
	}
	if j.heldBack.IsZero() {
		j.heldBack = now
	}
	if now.Sub(j.heldBack) >= maxWaitFactor*j.wait.window {
		return verdictBelieve
	}
	return verdictHold
}

// takenEvent is what laterWriter made of an event, for traces: its kind,
// and how many watches the judge had dropped once it was taken.
type takenEvent struct {
	kind  eventKind
	drops int
}

// lookKind is what a look (the re-check, Recheck) is to do.
type lookKind uint8

const (
	lookNothing lookKind = iota // the stat is as the last read left it
	lookRead                    // read now, and believe a missing or empty file only after a doubt
	lookGuess                   // the stat changed with no event: give a writer a window first
	lookReadNow                 // read now, and believe what is read
)

// guess begins the wait a look decided on: without events, nothing says
// whether a writer is done, so it is given a window.
func (j *judge) guess(why Reason, now time.Time) {
	if !j.wait.blocksReads() {
		j.writer.begin(nil, "", false, nil, nil) // no event names the file written
	}
	j.wait.guess(why, now)
}
