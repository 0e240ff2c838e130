package file

import (
	"io/fs"
	"slices"
	"time"
)

// judge decides, for one watch session, what each event and each read
// means: what to wait for, what to read and how far to believe it, what to
// look at again. It does no I/O and reads no clock: the session (the
// shell, session.go) hands it events, reads, the time and the facts it
// asks for, carries out what it decides, and sets its timer to the wait's
// deadline. So every decision can be tested from a table.
//
// Its state: the wait before a read (readWait), what the last reads
// found, the writer a wait is for (writerWait), and what is due next
// (due).
type judge struct {
	caps   caps               // what the notifier can see
	events bool               // events come: false for a session that polls
	view   *sight             // the path's last resolution; the session's, read only
	paths  []string           // the files the subject reads, as given (subject.paths)
	doubt  func(reading) bool // the subject's rule: is a read the middle of an update?

	wait   readWait
	writer writerWait
	due    due

	sig     signature   // the stat of the last read believed; zero if it failed
	readSig signature   // the stat of the last read made, believed or not; zero if it failed
	info    fs.FileInfo // the file of the last read believed; nil for a set, or if it failed
	judging signature   // while the events queued at a read are judged, that read's stat; zero otherwise

	watchesGone  int // directory watches the kernel dropped, counted to tell whether a read came through one
	filesGone    int // removals of the file itself seen, counted to tell whether a read came before one
	chainTouched int // events on names on the way to the file, counted to tell whether the path may lead elsewhere

	heldBack time.Time // since when reads have been left to later writers; zero if the last was believed

	drop []string // watches the kernel dropped, for the session to forget
}

// awaitedWatch is the path of the file a wait is for, once the judge asks
// for the file's own watch (see waitFor); "" if none is wanted.
func (j *judge) awaitedWatch() string {
	if j.writer.path == "" || j.writer.watch != 0 || !j.wait.blocksReads() {
		return ""
	}
	return j.writer.path
}

// awaitWatched takes the id of the own watch the session added on the
// awaited file, once it found the file there still: the file's witness.
// Zero says it could not: the file is no longer there, or is not that
// file, and the wait goes on without a witness.
func (j *judge) awaitWatched(id int) {
	j.writer.watch = id
	if id == 0 {
		j.writer.path = "" // not asked again
	}
}

// awaitedKept is the path of the awaited file's own watch, which the
// session keeps while the wait holds, whatever the path leads to; "" if
// none.
func (j *judge) awaitedKept() string {
	if j.writer.watch == 0 || !j.wait.blocksReads() {
		return ""
	}
	return j.writer.path
}

// writerWait is what a session knows of the writers a wait is for.
type writerWait struct {
	writes int         // in-place writes seen, counted to tell whether a writer began
	file   fs.FileInfo // the file a wait for writers is for; nil if not known
	seen   int         // writes seen when file was taken: see changedUnheard
	restat bool        // the path may lead elsewhere since file was taken: the next write says which file is written

	// The file's own watch, its witness: a watch is of one inode for as
	// long as it lives, so what comes on it is that file's, whatever name
	// the path shows, even where another file was given its inode number.
	path  string // where file was found, to watch it by itself
	watch int    // the id of file's own watch; zero if it has none
	gone  bool   // its own watch said it is gone for good
}

// due is what the judge has asked the session to do next.
type due struct {
	look    bool // a relevant event asks to resolve and read again
	fresh   bool // and what is read may have been written where no watch saw it
	readNow bool // the writer closed the file: read it, and believe what is read
	rewatch bool // events were lost: re-add every watch too

	touched    map[string]bool // paths events named since the last resolution
	touchedAll bool            // events were lost since the last resolution: resolve from the root
}

func newJudge(t target, c caps, events bool, view *sight) *judge {
	return &judge{caps: c, events: events, view: view, paths: t.subj.paths(), doubt: t.subj.doubtful,
		wait: readWait{window: t.opts.quiet}, due: due{touched: make(map[string]bool)}}
}

// next says what the session is to do now, if anything: read again (with
// the reason and trust it is to read with), because an event or a read
// asked for it. It takes the request: asking again says no, unless
// something asked again since.
func (j *judge) next() (Reason, trust, bool) {
	switch {
	case j.due.readNow:
		j.due.look, j.due.readNow = false, false
		return ReasonWrite, closedByWriter, true
	case j.due.look:
		j.due.look = false
		return ReasonEvent, doubtful, true
	}
	return "", 0, false
}

// eventKind is what an event asks of a session. Events are only hints:
// which entry changed says whether and when to look again, never what
// changed. event classifies each event, then acts on its kind.
type eventKind uint8

const (
	eventIgnored   eventKind = iota // about nothing the subject depends on, or nothing changed
	eventSetChange                  // a file of a set that may be rewritten file by file changed
	eventMade                       // an entry was created where the path leads: its creator may still be writing it
	eventMovedIn                    // an entry was renamed or linked in: complete as it arrives
	eventGone                       // the file itself went, and the path no longer shows it
	eventLook                       // something on the path's chain changed: look again now
	eventWrite                      // the file was written in place
	eventClosed                     // the writer a wait was for closed the file
)

var eventKindNames = [...]string{"ignored", "set-change", "made", "moved-in", "gone", "look", "write", "closed"}

func (k eventKind) String() string { return eventKindNames[k] }

// event takes one event from the notifier at now; its name is clean. It
// returns what it made of it (eventIgnored for one about nothing the
// subject depends on).
func (j *judge) event(ev event, f facts, now time.Time) eventKind {
	if ev.has(opRescan) {
		j.eventsLost(now)
		return eventLook
	}
	name := ev.name
	if !j.view.relevant(name) {
		return eventIgnored
	}
	j.touch(name)
	if ev.has(opRemove) && f.watched(name) && !slices.Contains(j.drop, name) {
		j.watchGone(name)
	}
	kind := j.classify(ev, name, f)
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
		j.due.readNow = true // what the writer wrote is all there, empty or not
	}
	return kind
}

// classify says what a relevant event asks for.
func (j *judge) classify(ev event, name string, f facts) eventKind {
	if k, ok := j.witnessed(ev); ok {
		return k
	}
	closes := j.caps.closes && j.wait.window > 0
	switch {
	case !j.view.atomic && name != j.view.swap && j.wait.window > 0:
		// A set's files may be rewritten one by one: it is read once it
		// has settled, unless a kubelet swap updated all of them at once.
		if ev.has(opCreate|opRemove|opWrite) || j.sig == 0 || f.subject() != j.sig {
			return eventSetChange
		}
		return eventIgnored
	case ev.has(opMade) && closes:
		return eventMade
	case ev.has(opCreate) && !ev.has(opMade) && j.caps.closes:
		// Where creates and renames look alike, a create is only a look.
		return eventMovedIn
	case ev.has(opRemove) && !ev.has(opCreate) && slices.Contains(j.view.files, name):
		if j.asJudged(f) {
			return eventIgnored // see classifyTouch
		}
		if j.arrivalsTold(f) && f.subject() != j.sig {
			return eventGone
		}
		return eventLook
	case ev.has(opCreate | opRemove):
		return eventLook
	case ev.has(opWrite|opClose) && !j.ofFileRead(name, f):
		// Queued for a file the path led to before: its writer is not
		// this file's, nor its close the end of this file's writes.
		return j.classifyTouch(ev, name, f)
	case ev.has(opWrite):
		return eventWrite
	case ev.has(opClose) && (j.wait.state != waitNone || j.due.readNow):
		// The same close told again, by the file's own watch after its
		// directory's, leaves the read it asked for standing: nothing
		// happened in between.
		return eventClosed
	case ev.has(opClose | opAttrib):
		return j.classifyTouch(ev, name, f)
	}
	return eventIgnored
}

// witnessed says what an event on the own watch of the file a wait is for
// asks, if that is where it came: the file's writer's writes and close,
// whatever name the path shows now; the file gone for good, which leaves
// the wait nothing to wait for, even where the path leads to a file given
// its inode number since.
func (j *judge) witnessed(ev event) (eventKind, bool) {
	if ev.watch == 0 || ev.watch != j.writer.watch || !j.wait.blocksReads() {
		return 0, false
	}
	switch {
	case ev.has(opGone):
		j.writer.gone = true
		return eventLook, true
	case ev.has(opWrite):
		return eventWrite, true
	case ev.has(opClose):
		return eventClosed, true
	}
	return 0, false
}

// ofFileRead reports whether an event on name is about the file the path
// leads to: one the last resolution found, or, where that resolution is
// stale by now (an event taken before the refresh it asks for), the file
// the path names now. An event under another name was queued for a file
// the path led to before (a symlink retargeted since, a directory made
// again): its writes and its writer's close say nothing of this file.
func (j *judge) ofFileRead(name string, f facts) bool {
	if slices.Contains(j.view.files, name) {
		return true
	}
	info := f.lstat(name)
	if info == nil || !info.Mode().IsRegular() {
		return false
	}
	for _, p := range j.paths {
		if cur := f.stat(p); cur != nil && sameFile(cur, info) {
			return true
		}
	}
	return false
}

// classifyTouch says what a close with no wait for it (the watch came after
// the write), a chmod, a touch, a link made or removed ask for: the file
// changed only if its stat did, or if it could not be read and perhaps now
// can. (Reading on every such event would let our own reads wake us,
// without end on a strictatime mount.)
func (j *judge) classifyTouch(ev event, name string, f facts) eventKind {
	switch {
	case j.asJudged(f) && slices.Contains(j.view.files, name):
		// An event of the file, taken with the events queued at a read,
		// and the file is as that read found it: what the event tells of,
		// the read saw (the same close told again by the file's own watch
		// after its directory's; a file renamed over telling of its own
		// removal). Whether the read is believed is for its judgment to
		// say. (One of a directory on the way is no news of the file, but
		// may make that judgment read again: see laterWriter.)
		return eventIgnored
	case j.sig == 0:
		return eventLook // it could not be read; perhaps now it can
	case f.subject() == j.sig:
		return eventIgnored
	case ev.has(opAttrib) && j.arrivalsTold(f) && !j.due.readNow && j.replaced(f):
		// The link count dropping is the first the kernel says of a
		// removal, before the directory's event. (A touch of the file
		// still there reads at once.) Not while a writer's close asks
		// for a read: the path showed the file closed when the close was
		// taken, and a file put in its place since would have come with
		// an event of its own, which ends that ask. This is about the
		// file closed: its times or mode set (tar: create, write, close,
		// set times), or the first of its own removal, whose directory's
		// event follows and says so.
		return eventGone
	}
	return eventLook
}

// asJudged reports whether a read is being judged (see laterWriter) and
// the subject's stat is the one that read took.
func (j *judge) asJudged(f facts) bool {
	return j.judging != 0 && f.subject() == j.judging
}

// arrivalsTold reports whether a file that takes the watched file's place
// will be told of by an event of its own that says how it came: where the
// kernel tells a creation from a rename (and reports the creator's close),
// and the file's directory is watched. A file's own watch, standing in for
// a directory that cannot be listed, reports nothing of its successor.
func (j *judge) arrivalsTold(f facts) bool {
	return j.caps.closes && j.wait.window > 0 && !f.refused(j.view.home)
}

// fileNow is the file the path leads to now: nil if there is none. one is
// false for a set, which has no one file.
func (j *judge) fileNow(f facts) (info fs.FileInfo, one bool) {
	if len(j.paths) != 1 {
		return nil, false
	}
	return f.stat(j.paths[0]), true
}

// replaced reports whether the path no longer shows the file last read:
// it is missing, or another file is there. (The inode number alone cannot
// tell: a file created at once may be given the one just freed; its size
// most likely differs.)
func (j *judge) replaced(f facts) bool {
	cur, one := j.fileNow(f)
	if j.info == nil || !one {
		return true
	}
	return cur == nil || !sameFile(cur, j.info) || cur.Size() != j.info.Size()
}

// eventsLost takes the notifier's word that events were lost, a writer's
// close or another's writes perhaps among them: every watch is renewed and
// the file looked at again, from the root, as where no watch saw writers;
// no close taken before vouches for what is read, and a wait for a close
// becomes a wait for quiet.
func (j *judge) eventsLost(now time.Time) {
	j.due.rewatch, j.due.look, j.due.readNow = true, true, false
	j.due.touchedAll, j.due.fresh = true, true // writers may have begun unseen
	j.wait.closeLost(now)
}

// touch notes that an event named path since the last resolution. A name
// on the way to the file (not the file itself, which in-place writes name)
// means the path may lead elsewhere now.
func (j *judge) touch(path string) {
	j.due.touched[path] = true
	if j.view.names[path] && !slices.Contains(j.view.files, path) {
		j.chainTouched++
	}
}

// watchGone takes the kernel's word that the watch of a path went with
// it: the session forgets it, and watches the path afresh, even if it is
// back. A directory moved away takes the watches below it along: whatever
// takes its place, they watch the old tree.
func (j *judge) watchGone(name string) {
	j.drop = append(j.drop, name)
	if !slices.Contains(j.view.files, name) {
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
		j.waitFor(f.stat(name), name, f)
	}
	j.writer.writes++
	j.wait.written(ReasonWrite, j.caps.closes, now)
}

// waitFor notes the file a wait for writers begins for (nil: not known),
// and path, where it was found ("" if not known). Where the notifier can
// watch a file by itself, the wait takes the file's own watch as its
// witness: the one the path has if it was added for that file, or one the
// session adds now (awaitedWatch).
func (j *judge) waitFor(info fs.FileInfo, path string, f facts) {
	j.writer.file, j.writer.restat, j.writer.seen = info, false, j.writer.writes
	j.writer.path, j.writer.watch, j.writer.gone = "", 0, false
	if info == nil || path == "" || !j.caps.files {
		return
	}
	j.writer.path = path
	j.writer.watch = f.ownWatch(path, info)
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
		j.waitFor(info, name, f)
		j.writer.writes++
		j.wait.emptyWhileOpen(ReasonWrite, now)
	default:
		j.waitFor(info, name, f)
		j.writer.writes++
		j.wait.written(ReasonWrite, j.caps.closes, now)
	}
}

// ledElsewhere reports whether the path, one file's, leads now to another
// file than the one a wait for writers is for, or to none. Not known is not
// elsewhere.
func (j *judge) ledElsewhere() bool {
	if !j.view.one || j.writer.file == nil {
		return false // a set's resolution names no file
	}
	if j.writer.gone {
		return true // whatever the path leads to, even with its inode number
	}
	return j.view.file == nil || !sameFile(j.writer.file, j.view.file)
}

// changedUnheard reports whether the file a wait for writers is for, by
// device and inode number, now differs in size or modification time with
// no write heard since the wait began: a change no event told of (the
// watch was not in place, or its events were lost), or another file, made
// in its place at once and given the freed inode's number. A wait begun by
// a write event never answers yes: seen is taken before that write is
// counted.
func (j *judge) changedUnheard(f facts) bool {
	w := j.writer.file
	if w == nil || j.writer.writes != j.writer.seen {
		return false
	}
	cur, one := j.fileNow(f) // the resolution is the last one if no event named the path
	if !one || cur == nil {
		return false
	}
	return cur.Size() != w.Size() || !cur.ModTime().Equal(w.ModTime())
}

// resolved takes a new resolution of the path: from the root if all, else
// resumed from the names touched since the last. Nothing is touched since.
func (j *judge) resolved(all bool) {
	clear(j.due.touched)
	if all {
		j.due.touchedAll = false
	}
}

// resolveAll reports whether the next resolution is to start from the
// root: events were lost, so nothing says which names changed.
func (j *judge) resolveAll() bool { return j.due.touchedAll }

// touchedName reports whether an event named path since the last
// resolution: where a resumed resolution starts.
func (j *judge) touchedName(path string) bool { return j.due.touched[path] }

// takeRewatch reports, once, whether every watch is to be added again.
func (j *judge) takeRewatch() bool {
	all := j.due.rewatch
	j.due.rewatch = false
	return all
}

// takeDropped returns the watches the kernel dropped since it was last
// asked, for the session to forget.
func (j *judge) takeDropped() []string {
	d := j.drop
	j.drop = j.drop[:0]
	return d
}

// watchesAdded takes what the session found after adding watches that a
// read's resolution planned: whether the chain moved while they were
// added, and, if not, the subject's stat now.
func (j *judge) watchesAdded(moved bool, st signature) {
	switch {
	case moved:
		// The chain moved while the watches were added: look again, at
		// what no watch saw being written.
		j.due.look, j.due.fresh = true, true
		j.due.touchedAll = true // no event says where
	case st != 0 && st != j.readSig:
		// The file changed where no watch saw it: a writer may be at work
		// there, unseen. Its writes from now on come as events; look
		// again as where no watch saw writers, which waits for one only
		// if the file says it was written lately (a kubelet payload
		// older than its ..data link was not). A file that is not there
		// has no writer to wait for: its return comes as events, now
		// watched for, and a wait for quiet would only hold back the read
		// they ask for.
		j.due.look, j.due.fresh = true, true
	}
}
