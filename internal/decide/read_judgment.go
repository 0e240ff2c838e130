package decide

import (
	"io/fs"
	"time"
)

// readOrder is a read the decider asks for: why, and what it comes after.
// unwatched says it is made where no watch told of writers until now.
type readOrder struct {
	why       Reason
	after     readAfter
	unwatched bool
}

// lastRead is what the watch's last reads found: what events' stats are
// compared with.
type lastRead struct {
	sig     Signature   // the stat of the last read accepted; zero if it failed
	readSig Signature   // the stat of the last read made, accepted or not; zero if it failed
	info    fs.FileInfo // the file of the last read accepted; nil for a set, or if it failed
	judging Signature   // while the events queued at a read are judged, that read's stat; zero otherwise
	// sure says that the last read accepted was on the kernel's word that
	// no writer was at work on the file: an event that tells of that
	// file's creation, taken after it, tells of a creator done with it.
	sure bool
	// made and madeSure are the file of the last read made, accepted or
	// not, and whether the kernel said no writer was at work on it: a read
	// held (an empty file, confirmed first) knows as much of the file's
	// creator as one accepted.
	made     fs.FileInfo
	madeSure bool
	// withinTick says that the last read accepted was of a file written less
	// than statTick before (or stamped less than statTick ahead): a write of the same size after it, in the
	// same tick of the filesystem's clock, leaves the stat as it was, so
	// a look reads the file rather than trust the stat (git's "within a tick
	// clean" entries, for the same reason).
	withinTick bool
}

// statTick bounds how coarsely a filesystem keeps modification times: a
// few milliseconds where the kernel's coarse clock stamps them (ext4,
// xfs, tmpfs), a second on some network filesystems. FAT's two seconds
// are beyond it.
const statTick = time.Second

// outcome is what becomes of a read.
type outcome uint8

const (
	readHeld     outcome = iota // not accepted: a wait (or a confirmation) it began reads again
	readAccepted                // handed on: what the file is
	readRetried                 // failed for a reason of the process: told of, and made again
	readAskQueue                // accepted if no later writer began: see laterWriter
)

var outcomeNames = [...]string{"held", "accepted", "retry", "ask the queue"}

func (o outcome) String() string { return outcomeNames[o] }

// refreshing takes a new resolution of the path, made for a read of why
// and t, and says whether to read, and how. unheard says that a file the
// resolution led to was not wanted before it (events on it went to no one
// until then); file is what the path leads to now, for a read after a
// writer's pause (nil otherwise).
func (d *Decider) refreshing(why Reason, t readAfter, unheard bool, file fs.FileInfo) (readOrder, bool) {
	if d.wait.blocksReads() && d.writer.elsewhere(&d.res, d.cfg.Inodes) {
		// A wait for the writers of a file the path no longer leads to (a
		// rename brought another, the file went): their close may never
		// be told here. What is read now is judged afresh.
		d.wait.moved()
	}
	// Whatever an event or a wait said, it said nothing of writers in a
	// directory no watch covered: a close may even have been the last
	// file's, in a directory deleted since. A file the resolution did not
	// reach, but the read does, appeared since; one the last refresh
	// found only once its watches were added, was written unwatched; one
	// the resolution wants only now was written unheard.
	unwatched := d.pending.unwatched || d.watches.watched[d.res.Home] == 0 || len(d.res.Files) == 0 || unheard
	d.pending.unwatched = false
	switch {
	case t.endsWriterWait() && d.writer.elsewhere(&d.res, d.cfg.Inodes):
		// The wait that ended was for the writer of a file the path no
		// longer leads to: what it says of that writer says nothing of
		// this file, which came where no event told of it (renamed in
		// before the watch that would have seen it was added). It is
		// judged as any file found where no watch heard its writer.
		t, unwatched = afterEvent, true
	case t == afterPause && d.writer.changedUnheard(file):
		// The wait ended taking its writer to hold the file open, but
		// the file changed with no write heard from it: no heard writer
		// is at work on what is there (its events were lost, or it is
		// another file that took the freed inode's number). It is read as
		// a quiet window's end: an empty file is confirmed, not held for a
		// close, and the wait's cap still holds.
		t = afterQuiet
	}
	return d.wait.mayRead(why, t, unwatched)
}

// judgeRead judges a read r made for o at now. via is the file the
// resolution made just before it found (nil if not known). It says what
// becomes of the read; readAskQueue leaves that to laterWriter, once the
// events the kernel queued by now are taken.
//
// A missing or empty file that an event's read found is confirmed rather
// than accepted: either is far more often the middle of an update (a
// remove-then-create swap, a file created before it is written) than its
// end. It is handed on only if it lasts a quiet window, and any event in
// between reads again at once. A file that a writer holding it open has
// left empty is not accepted before its close. What a writer's close
// reads is handed on only if no later writer had begun by then. A read
// that failed for a reason of the process, not of the file, is told of and
// retried.
//
// Where the kernel says whether anyone holds the file open for writing
// (r.Writers), its word is taken over any guess from timing: a file with a
// writer is that writer's to finish, and waited for as one heard writing
// (its close reads, or its pause); one with none is read as it is (an
// empty one is still confirmed first). Where it does not say, an unwatched
// read (made where no watch told of writers until now: see refreshing) that
// finds the file written lately gives a writer no event told of a short
// pause, as one that an event read is given where no close will be
// reported; and a wait that ended finding the file written within it goes
// on. A read found elsewhere than the resolution's file is made unwatched in o,
// for a retry.
func (d *Decider) judgeRead(r *Read, o *readOrder, via fs.FileInfo, vouched bool, now time.Time) outcome {
	if via != nil && r.Err == nil && !d.cfg.Inodes.SameFile(r.Info, via) {
		// The path led to another file by the time it was read than the
		// resolution just made found (a link put in its place): one no
		// watch may have covered while it was written.
		o.unwatched = true
	}
	d.last.readSig = r.Sig
	d.last.made, d.last.madeSure = r.Info, r.Err == nil && r.Writers == WritersNone
	if r.Process {
		return readRetried // made again as it was, counted kept
	}
	// A write heard since the close makes the writer a heard one, whose
	// pause reads what it wrote so far (see write).
	counted := d.writer.counted && !d.wait.heard
	d.writer.counted = false
	if d.wait.window > 0 && r.Err == nil {
		switch r.Writers {
		case WritersOpen:
			if v, ok := d.writerHolds(r, o.after, counted, now); ok {
				return v
			}
		case WritersNone:
			return d.noWriter(r, o.after, vouched, now)
		}
	}
	return d.judgeByTime(r, o.after, o.unwatched, now)
}

// writerHolds judges a read of a file the kernel says a writer holds open,
// made after t: a file written is that writer's to finish, and an empty
// one its to write, both waited for as for a writer heard writing, but
// after a writer's pause (which reads what the paused writer wrote so far)
// and after the longest wait for an empty file's writer; then the
// kernel's word changes nothing (ok is false). At the cap, the read is
// made again (retryAtCap), CapGap later and then a window apart, until one
// falls between writers: none made inside one is accepted.
//
// At a writer's close, the writer the kernel still counts, asked, is most
// likely the one closing: Linux sends the close's event before it stops
// counting the writer (__fput: fsnotify_close, then put_file_access), and
// a writer preempted in between is counted for as long as it waits for a
// CPU. So the kernel is asked again a writer no event told of's pause
// later (UnheardWriterPause, or the window if shorter), not a writer's
// HeldOpenWindow later (counted): by then the closing writer is gone, and
// a writer still counted at that read is another that holds the file,
// most likely one that opened it before the first closed, and is waited
// for as one heard writing. (The count of the file's openers has no such
// moment: a writer it counts at a close is another's, heard.)
func (d *Decider) writerHolds(r *Read, t readAfter, counted bool, now time.Time) (outcome, bool) {
	switch {
	case t == afterPause && counted:
	case t == afterCap:
		d.wait.retryAtCap(now)
		return readHeld, true
	case t == afterPause, t == afterLongestWait:
		return 0, false
	case t == afterClose && d.readAsked:
		d.beginWriter(r.Info, d.fileOf(r))
		d.wait.askAgain(r.Why, now)
		d.writer.counted = true
		return readHeld, true
	}
	d.beginWriter(r.Info, d.fileOf(r))
	if !counted && d.closeMayGoUntold() {
		// The file read is not the one the resolution just made led to:
		// it came after (a file made in a directory made again, one
		// renamed in), where no watch of it, nor one of its directory
		// that tells its entries' closes, may have been in place, and
		// none of its own is asked for. Its writer may close before the
		// watches the path now needs are added, and that close would
		// never be told: the kernel is asked again a writer no event
		// told of's pause later, as at a writer's close, not held for a
		// close (for a second, or ten if it is empty).
		d.wait.askAgain(r.Why, now)
		d.writer.counted = true
		return readHeld, true
	}
	if r.Empty {
		d.wait.emptyWhileOpen(r.Why, d.cfg.Caps.Closes, now)
	} else {
		d.writer.writes++
		d.wait.written(r.Why, true, now)
	}
	return readHeld, true
}

// closeMayGoUntold reports whether the close of the writer of a file a
// wait just began for may come before any watch that would tell it: where
// closes are told, the wait has no watch of the file by itself, and asks
// for none, because the one-file resolution the read went by did not lead
// to that file (see fileOf). A set's files are left to their directory's
// watch.
func (d *Decider) closeMayGoUntold() bool {
	return d.cfg.Caps.Closes && d.cfg.Caps.Files && d.res.One && d.writer.path == ""
}

// noWriter judges a read, made after t, of a file no one holds open for
// writing, by the kernel's word: what it holds is what its writers left,
// read as it is, with no pause for a writer there is not. Missing, or
// empty, it is confirmed first, as an event's read is (at a cap too); one
// a writer's close left empty is confirmed only once no writer came for a
// while (see closedEmpty: it is most often emptied for the next writer to
// fill, truncate then append, and no writer holds it in between); and a
// wait's end reads it as it is. Cut short as it was read (its truncation's
// writer is gone by now), it is read again. Vouched for (see vouched), it
// is accepted at once: no writer was at work on what was read, whatever
// the events queued since say of writers that came after it; elsewhere
// they are taken first (laterWriter).
func (d *Decider) noWriter(r *Read, t readAfter, vouched bool, now time.Time) outcome {
	doubted := r.doubtful() && t != afterClose && t != afterWait && t != afterLongestWait
	switch {
	case doubted:
		d.wait.confirm(r.Why, now)
		return readHeld
	case r.Torn:
		d.pending.reread = true
		return readHeld
	case t == afterCap || !d.cfg.Events || vouched:
		return readAccepted
	}
	return readAskQueue
}

// heldUnsure holds a read of a file that the count of its openers says
// someone holds open without having written it since (see openers.say):
// a reader, or a writer about to write. It is given the pause of a writer
// no event told of: a writer's truncation or first write comes within
// it, and a wait for that writer follows. Someone still holding the file
// so at the next read is most likely a reader, and the kernel is asked
// (openers.asks): a writer it says holds the file is awaited as one heard
// writing (see writerHolds), and with none, the count starts afresh.
func (d *Decider) heldUnsure(r *Read, now time.Time) outcome {
	d.beginWriter(r.Info, d.fileOf(r))
	d.wait.unheardWriter(r.Why, now)
	return readHeld
}

// judgeByTime judges a read, made after t, of a file whose writers the
// kernel does not tell of: by what its times say of them.
func (d *Decider) judgeByTime(r *Read, t readAfter, unwatched bool, now time.Time) outcome {
	waits := d.wait.window > 0
	doubted := r.doubtful() && waits
	lately := func(w time.Duration) bool { return waits && r.Err == nil && r.writtenWithin(w, now) }
	closes := d.cfg.Caps.Closes
	switch {
	case t == afterPause && doubted && r.Err == nil:
		d.beginWriter(r.Info, d.fileOf(r))
		d.wait.emptyWhileOpen(r.Why, closes, now)
		return readHeld
	case (t == afterEvent || t == afterPause || (t == afterQuiet || t == afterCap) && r.Err == nil) && doubted:
		// A cap's read, too: the file it finds empty is most likely a
		// writer's truncation, caught because writes went on for so long.
		d.wait.confirm(r.Why, now)
		return readHeld
	case r.Err == nil && r.Torn && waits:
		// A writer truncated the file as it was read: wait for it, as for
		// one no event told of (its event may not have come yet). Even at
		// a cap: what was read is a part, and the writer is at it now.
		d.awaitUnseenWriter(r.Why, r.Info, d.fileOf(r), now)
		return readHeld
	case t == afterCap:
	case (t == afterWait || t == afterLongestWait || t == afterQuiet) && lately(d.wait.window), t == afterPause && lately(d.wait.writerPause(closes)):
		// The wait was quiet only because the writes' events had not come
		// yet: the file says it was written within it. A file found empty
		// so is given a quiet window, not a wait for its writer's close:
		// nothing says one holds it open (a rename may have brought it, or
		// a read before took its writer's close), and a close that never
		// comes would hold it back for MaxWriterWait.
		d.beginWriter(r.Info, d.fileOf(r))
		d.wait.resume(closes && !doubted, now)
		return readHeld
	case (unwatched || t == afterEvent && !closes && r.Why != ReasonStart) && lately(d.wait.writerPause(closes)):
		// A writer no event told of, or whose close no event will tell
		// of, may still be at it: it is given the pause a writer that
		// keeps the file open gets. (The read that starts a watch is its
		// baseline, whatever it finds.) An empty file is confirmed
		// instead: its writer, if one holds it open, is heard from now on
		// (its writes, its close), and nothing says one does.
		if doubted {
			d.wait.confirm(r.Why, now)
			return readHeld
		}
		d.awaitUnseenWriter(r.Why, r.Info, d.fileOf(r), now)
		return readHeld
	case waits && d.cfg.Events:
		return readAskQueue
	}
	return readAccepted
}

// fileOf is where the file r read is, if the path's resolution is the one
// the read went by and led to it: the file's real path. "" if not known.
func (d *Decider) fileOf(r *Read) string {
	if len(d.res.Files) != 1 || d.res.File == nil || r.Info == nil || !d.cfg.Inodes.SameFile(r.Info, d.res.File) {
		return ""
	}
	return d.res.Files[0]
}

// closedEmpty says what becomes of a read that laterWriter found no later
// writer for: a writer's close (t) that leaves the file empty, no later
// writer known yet, was most often emptying the file to write it again
// (truncate, then append), and the next writer has yet to begin. It is
// confirmed only once no writer has appeared for a while
// (readWait.emptyClosed).
func (d *Decider) closedEmpty(r *Read, t readAfter, now time.Time) outcome {
	if t == afterClose && r.Err == nil && d.wait.window > 0 && r.doubtful() {
		d.wait.emptyClosed(r.Why, now)
		return readHeld
	}
	return readAccepted
}

// accept takes a read the decider accepts: it ends a confirmation, and
// is what later reads and stats are compared with.
func (d *Decider) accept(r *Read, now time.Time) {
	d.wait.accepted()
	d.heldBack = time.Time{} // a read accepted ends the holding back, however it was made (a cap's)
	d.last.sig, d.last.info, d.last.sure = r.Sig, r.Info, r.Err == nil && r.Writers == WritersNone
	// A file stamped a tick or more ahead of this clock gets a new stamp
	// at its next write, as one stamped a tick behind it does.
	age := now.Sub(r.ModTime)
	d.last.withinTick = r.Err == nil && age < statTick && age > -statTick
}

// awaitUnseenWriter waits for a writer that may be at work where no event
// told of it: where closes are reported, as for a writer that keeps the
// file open (its close, or its pause, reads); elsewhere, a quiet window,
// which an event showing a swap ends. info is the file it may be at work
// on.
func (d *Decider) awaitUnseenWriter(why Reason, info fs.FileInfo, path string, now time.Time) {
	d.beginWriter(info, path)
	if d.cfg.Caps.Closes {
		d.wait.unheardWriter(why, now)
		return
	}
	d.wait.statChanged(why, now)
}

// laterWriter judges a read that judgeRead found acceptable if no later
// writer had begun by the time it was made. What an event or a writer's
// close said was whole may not be by the time it is read: the next writer
// may have truncated the file (two os.WriteFile calls in a row, a
// rename-over and then an edit in place), and the read may have found its
// work half done. The loop takes every event the kernel queued by then
// (q.Queued, judged with the facts q.QueuedFacts) and those that came
// while it took them (q.Late, with q.LateFacts), and hands them here: the
// read is accepted unless they tell of such a writer, and is then left to
// that writer's close, or its quiet.
//
// Writers that never let up would leave every read to the next: once they
// have held reads back for MaxWaitFactor windows, what is read stands.
func (d *Decider) laterWriter(r *Read, q *Queue, now time.Time) outcome {
	writes, gone, moved, removed := d.writer.writes, d.watchesGone, d.chainTouched, d.filesGone
	lost := false
	d.last.judging = r.Sig
	for _, batch := range [...]struct {
		evs []Event
		f   *Facts
	}{{q.Queued, &q.QueuedFacts}, {q.Late, &q.LateFacts}} {
		for _, ev := range batch.evs {
			d.takeEvent(ev, batch.f, now)
			lost = lost || ev.Has(OpRescan) // a write may have been lost with it
		}
	}
	d.last.judging = 0
	// A watch that went since may have been the one to tell of a writer
	// where the read was made (a directory deleted and made again, and
	// written in at once): the read is made again, from what is watched.
	lost = lost || d.watchesGone != gone
	// A name on the way that changed since the resolution the read went
	// by: the read may have found a file elsewhere than where the watches
	// are. It is made again, by a new resolution.
	lost = lost || d.chainTouched != moved
	if d.watchesGone != gone || d.chainTouched != moved {
		// Made again as where no watch heard the writers: the watches in
		// place by then may have come after them. Made again whatever the
		// events said of themselves: a touch of a directory on the way
		// asks for nothing, yet the read it makes doubtful is not accepted.
		d.pending.reread, d.pending.unwatched = true, true
	}
	// The file read was removed since (not the one a rename put it in
	// place of, whose removal comes after it): the confirmation its removal
	// began is not for this read to end, and its end reads again.
	lost = lost || d.filesGone != removed && d.goneSince(r, &q.LateFacts)
	if d.writer.writes == writes && !lost {
		d.heldBack = time.Time{}
		return readAccepted
	}
	if d.heldBack.IsZero() {
		d.heldBack = now
	}
	if now.Sub(d.heldBack) >= MaxWaitFactor*d.wait.window {
		return readAccepted
	}
	return readHeld
}

// goneSince reports whether the path no longer shows the file r read, by
// the facts f. A set's read is taken to be there, and so is one the facts
// say nothing of (no stat of the path was gathered).
func (d *Decider) goneSince(r *Read, f *Facts) bool {
	if r.Info == nil || len(d.cfg.Paths) != 1 || len(f.Paths) == 0 {
		return false
	}
	cur := f.file()
	return cur == nil || !d.cfg.Inodes.SameFile(cur, r.Info)
}

// lookKind is what a look (the re-check, Recheck) is to do.
type lookKind uint8

const (
	lookNothing     lookKind = iota // the stat is as the last read left it
	lookRead                        // read now, and accept a missing or empty file only once confirmed
	lookStatChanged                 // the stat changed with no event: give a writer a window first
	lookReadNow                     // read now, and accept what is read
)

// look decides what a look does, given the subject's stat st and the
// quiet window: the periodic re-check, the safety net, a poll, and
// Recheck's look now (force). It costs a stat when nothing changed, unless
// the last read was withinTick; otherwise, and always when forced, every watch is added again (in case one was lost
// without an event) and the file read: at once if the stat is as the last
// read left it (a forced look may know what the stat cannot show, such as
// a filesystem caching it), once writes have had a quiet window to finish
// if not.
func (l *lastRead) look(force bool, st Signature, window time.Duration) lookKind {
	unchanged := st != 0 && st == l.sig
	switch {
	case unchanged && !force && !l.withinTick:
		return lookNothing
	case unchanged:
		return lookRead
	case window > 0 && st != 0:
		return lookStatChanged
	}
	return lookReadNow
}

// statChanged begins the wait a look decided on: without events, nothing
// says whether a writer is done, so it is given a window.
func (d *Decider) statChanged(why Reason, now time.Time) {
	if !d.wait.blocksReads() {
		d.writer.begin(nil, "", false, 0) // no event names the file written
	}
	d.wait.statChanged(why, now)
}
