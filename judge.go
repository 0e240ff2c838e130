package file

import (
	"slices"
	"time"
)

// judge decides, for one watch session, what each event and each read
// means: what to wait for, what to read and how far to believe it, what to
// look at again. It does no I/O and reads no clock: the session (the
// shell, watch_loop.go) hands it events, reads, the time and the facts it
// asks for, carries out what it decides, and sets its timer to the wait's
// deadline. So every decision can be tested from a table.
//
// Its concerns are types of their own: the wait before a read
// (readWait), what the last reads found (lastRead), what an event asks
// for (classifier), the writer a wait is for and its witness (writerWait),
// and what the session is to do next (due). The judge's own methods take
// each input: an event (event), a new resolution (refreshing), a read
// (read, then laterWriter with the events queued at it), a look (look).
type judge struct {
	caps   caps               // what the notifier can see
	events bool               // events come: false for a session that polls
	view   *sight             // the path's last resolution; the session's, read only
	paths  []string           // the files the subject reads, as given (subject.paths)
	doubt  func(reading) bool // the subject's rule: is a read the middle of an update?

	wait   readWait
	last   lastRead
	writer writerWait
	due    due

	watchesGone  int // directory watches the kernel dropped, counted to tell whether a read came through one
	filesGone    int // removals of the file itself seen, counted to tell whether a read came before one
	chainTouched int // events on names on the way to the file, counted to tell whether the path may lead elsewhere

	heldBack time.Time // since when reads have been left to later writers; zero if the last was believed

}

func newJudge(t target, c caps, events bool, view *sight) *judge {
	return &judge{caps: c, events: events, view: view, paths: t.subj.paths(), doubt: t.subj.doubtful,
		wait: readWait{window: t.opts.quiet}, due: due{touched: make(map[string]bool)}}
}

// awaited is the path of the file a wait is for, while the wait asks the
// session for the file's own watch, its witness; "" otherwise.
func (j *judge) awaited() string { return j.writer.asked(j.wait.blocksReads()) }

// witnessKept is the path of the witness of a wait under way, which the
// session keeps watching whatever the path leads to; "" if none.
func (j *judge) witnessKept() string { return j.writer.kept(j.wait.blocksReads()) }

// event takes one event from the notifier at now; its name is clean. It
// returns what it made of it (eventIgnored for one about nothing the
// subject depends on).
func (j *judge) event(ev event, f facts, now time.Time) eventKind {
	if ev.has(opRescan) {
		j.due.lost()
		j.wait.closeLost(now) // a writer's close may have been lost: wait for quiet
		return eventLook
	}
	name := ev.name
	waiting := j.wait.blocksReads()
	// An event on the witness is the awaited file's, whatever the path's
	// resolution has come to since (a look that resolved it anew may have
	// found it leads elsewhere before the file's own end was taken): what
	// it says of the writer counts, even where its name no longer matters.
	relevant := j.view.relevant(name)
	if !relevant && !j.writer.on(ev, waiting) {
		return eventIgnored
	}
	if j.due.touch(name, j.view) {
		j.chainTouched++ // the path may lead elsewhere now
	}
	if ev.has(opRemove) && f.watched(name) && !slices.Contains(j.due.drop, name) {
		j.watchGone(name)
	}
	kind, ok := j.writer.witnessed(ev, waiting)
	if !ok && !relevant {
		return eventIgnored
	}
	if !ok {
		c := classifier{view: j.view, caps: j.caps, window: j.wait.window > 0, paths: j.paths, last: &j.last,
			waiting: j.wait.state, readNow: j.due.readNow, f: f}
		kind = c.kind(ev, name)
	}
	j.act(kind, name, f, now)
	return kind
}

// act does what an event of kind on name asks.
func (j *judge) act(kind eventKind, name string, f facts, now time.Time) {
	if kind != eventIgnored && kind != eventClosed {
		// A writer's close is the word of that writer on that file: after
		// anything else happened there, it vouches for nothing.
		j.due.readNow = false
	}
	switch kind {
	case eventMade, eventMovedIn, eventGone, eventLook:
		j.writer.restat = true
	}
	switch kind {
	case eventSetChange:
		j.wait.written(ReasonEvent, false, now)
	case eventMade:
		j.made(name, f, now)
	case eventMovedIn:
		j.wait.swapSeen()
		j.due.look = true
	case eventGone:
		j.fileGone(now)
	case eventLook:
		j.due.look = true
	case eventWrite:
		j.written(name, f, now)
	case eventClosed:
		j.wait.writerClosed()
		j.due.readNow = true // what the writer wrote is all there; if that is nothing, see emptyClosed
	}
}

// watchGone takes the kernel's word that the watch of a path went with
// it: the session forgets it, and watches the path afresh, even if it is
// back. A directory moved away takes the watches below it along: whatever
// takes its place, they watch the old tree.
func (j *judge) watchGone(name string) {
	j.due.drop = append(j.due.drop, name)
	if !slices.Contains(j.view.files, name) && name != j.witnessKept() {
		j.due.rewatch = true
		j.watchesGone++
	}
}

// fileGone takes the removal of the file itself, once the path no longer
// shows it (a rename-over read already leaves its old file's removal
// nothing to say). Whatever takes its place comes with an event of its
// own, read as that event says: a rename's at once, a creation's at its
// writer's close. Read now, on this event, it could be caught half-written
// (rm config.yaml; slow-producer > config.yaml); if nothing comes, the
// doubt's end reads it and reports it missing. A wait for writers that
// runs may be for the file that went: the path is resolved again, which
// ends it if so (see refresh), and reads nothing while it runs.
func (j *judge) fileGone(now time.Time) {
	j.filesGone++
	j.wait.doubt(ReasonEvent, now)
	if j.wait.blocksReads() {
		j.due.look = true
	}
}

// written takes an in-place write of the file at name: it is read once the
// writes are done. Which file a wait for them is for is looked up when it
// begins, and again if the path may have moved since.
func (j *judge) written(name string, f facts, now time.Time) {
	if j.wait.window == 0 {
		j.due.look = true
		return
	}
	if j.writer.file == nil || j.writer.restat || !j.wait.blocksReads() {
		j.writer.begin(f.stat(name), name, j.caps.files, f, j.due.drop)
	}
	j.writer.writes++
	j.wait.written(ReasonWrite, j.caps.closes, now)
}

// made decides how to read what was created where the path leads, not
// renamed there. A directory or a symlink is looked at at once. A regular
// file's creator may still be writing it (rm config.yaml; slow-producer >
// config.yaml). A file with nothing in it yet is read at its creator's
// close, however long the creator takes to start; one already written, at
// the close or after a quiet window (its writes, if any are still to come,
// turn that into a wait for the close). A hard link made there brings a
// file complete, as a rename does: read at once.
func (j *judge) made(name string, f facts, now time.Time) {
	info := f.lstat(name)
	switch {
	case info == nil || !info.Mode().IsRegular():
		j.due.look = true
	case linkCount(info) > 1:
		j.wait.swapSeen()
		j.due.look = true
	case info.Size() == 0 && j.caps.closes:
		j.writer.begin(info, name, j.caps.files, f, j.due.drop)
		j.writer.writes++
		j.wait.emptyWhileOpen(ReasonWrite, now)
	default:
		j.writer.begin(info, name, j.caps.files, f, j.due.drop)
		j.writer.writes++
		j.wait.written(ReasonWrite, j.caps.closes, now)
	}
}
