package decide

import (
	"io/fs"
	"slices"
	"time"
)

// eventKind is what an event asks of the watch. Events are only hints:
// which entry changed says whether and when to look again, never what
// changed. Each event is classified, then acted on by its kind.
type eventKind uint8

const (
	eventIgnored   eventKind = iota // about nothing the subject depends on, or nothing changed
	eventSetChange                  // a file of a set that may be rewritten file by file changed
	eventMade                       // an entry was created where the path leads: its creator may still be writing it
	eventMovedIn                    // an entry was renamed or linked in: complete as it arrives
	eventGone                       // the file itself went, and the path no longer shows it
	eventReread                     // something on the path's chain changed: look again now
	eventWrite                      // the file was written in place
	eventClosed                     // the writer a wait was for closed the file
)

var eventKindNames = [...]string{"ignored", "set-change", "made", "moved-in", "gone", "look", "write", "closed"}

func (k eventKind) String() string { return eventKindNames[k] }

// takeEvent takes one event at now, with the facts f, and returns what it
// made of it (eventIgnored for one about nothing the subject depends on).
func (d *Decider) takeEvent(ev Event, f *Facts, now time.Time) eventKind {
	if ev.Has(OpRescan) {
		d.pending.lost()
		d.wait.closeLost(now) // a writer's close may have been lost: wait for quiet
		d.openers.forget()    // and an open or a close: the count is off
		return eventReread
	}
	if d.openers.take(ev) {
		return eventIgnored // an open, or a reader's close: counted, and nothing else
	}
	name := ev.Name
	waiting := d.wait.blocksReads()
	// An event on the awaited file's own watch is that file's, whatever
	// the path's resolution has come to since (a look that resolved it
	// anew may have found it leads elsewhere before the file's own end was
	// taken): what it says of the writer counts, even where its name no
	// longer matters.
	relevant := d.res.relevant(name)
	own := d.writer.cameOnOwnWatch(ev, waiting)
	if !relevant && !own {
		return eventIgnored
	}
	if !own && d.watches.replaced(name, ev.Watch) {
		// It came on a watch the path no longer has: of the file that had
		// the name before the one watched now (a file renamed over telling
		// of its own end, after its successor was read and watched). It
		// says nothing of the path's file, nor of its watch.
		return eventIgnored
	}
	if d.pending.touch(name, &d.res) {
		d.chainTouched++ // the path may lead elsewhere now
	}
	if ev.Has(OpRemove) && d.watches.watched[name] != 0 && d.watches.cameOn(name, ev.Watch) && !slices.Contains(d.pending.drop, name) {
		d.watchGone(name)
	}
	kind, ok := d.writer.fromOwnWatch(ev, waiting)
	if !ok && !relevant {
		return eventIgnored
	}
	if !ok {
		kind = d.classify(ev, f)
	}
	d.act(kind, name, f, now)
	return kind
}

// classify says what a relevant event asks for, from the decider's state
// when the event is taken and the facts of the moment.
func (d *Decider) classify(ev Event, f *Facts) eventKind {
	name := ev.Name
	window := d.wait.window > 0
	closes := d.cfg.Caps.Closes && window
	switch {
	case !d.res.Atomic && name != d.res.DataLink && window:
		// A set's files may be rewritten one by one: it is read once it
		// has settled, unless a kubelet swap updated all of them at once.
		if ev.Has(OpCreate|OpRemove|OpWrite) || d.last.sig == 0 || d.changed(f) {
			return eventSetChange
		}
		return eventIgnored
	case ev.Has(OpMade) && closes && d.createdAsRead(name, f):
		// The file a read already found whole, by the kernel's word that
		// no writer was at work on it: its creator was done with it then.
		return eventIgnored
	case ev.Has(OpMade) && closes:
		return eventMade
	case ev.Has(OpCreate) && !ev.Has(OpMade) && d.cfg.Caps.Closes:
		// Where creates and renames look alike, a create is only a look.
		return eventMovedIn
	case ev.Has(OpRemove) && !ev.Has(OpCreate) && d.res.isFile(name):
		if d.asJudged(f) {
			return eventIgnored // see touch
		}
		if d.arrivalsTold() && d.changed(f) {
			return eventGone
		}
		return eventReread
	case ev.Has(OpCreate | OpRemove):
		return eventReread
	case ev.Has(OpWrite|OpClose) && !d.ofFileRead(name, f):
		// Queued for a file the path led to before: its writer is not
		// this file's, nor its close the end of this file's writes.
		return d.touch(ev, f)
	case ev.Has(OpWrite):
		return eventWrite
	case ev.Has(OpClose) && (d.wait.state != waitNone || d.pending.readNow):
		// The same close told again, by the file's own watch after its
		// directory's, leaves the read it asked for standing: nothing
		// happened in between.
		return eventClosed
	case ev.Has(OpClose | OpAttrib):
		return d.touch(ev, f)
	}
	return eventIgnored
}

// ofFileRead reports whether an event on name is about the file the path
// leads to: one the last resolution found, or, where that resolution is
// stale by now (an event taken before the refresh it asks for), the file
// the path names now. An event under another name was queued for a file
// the path led to before (a symlink retargeted since, a directory made
// again): its writes and its writer's close say nothing of this file.
func (d *Decider) ofFileRead(name string, f *Facts) bool {
	if d.res.isFile(name) {
		return true
	}
	info := f.entry(name)
	if info == nil || !info.Mode().IsRegular() {
		return false
	}
	return slices.ContainsFunc(f.Paths, func(cur fs.FileInfo) bool { return cur != nil && d.cfg.Inodes.SameFile(cur, info) })
}

// touch says what a close with no wait for it (the watch came after the
// write), a chmod, a touch, a link made or removed ask for: the file
// changed only if its stat did, or if it could not be read and perhaps now
// can. (Reading on every such event would let the watch's own reads wake
// it, without end on a strictatime mount.)
func (d *Decider) touch(ev Event, f *Facts) eventKind {
	switch {
	case d.asJudged(f) && d.res.isFile(ev.Name):
		// An event of the file, taken with the events queued at a read,
		// and the file is as that read found it: what the event tells of,
		// the read saw (the same close told again by the file's own watch
		// after its directory's; a file renamed over telling of its own
		// removal). Whether the read is accepted is for its judgment to
		// say. (One of a directory on the way is no news of the file, but
		// may make that judgment read again: see laterWriter.)
		return eventIgnored
	case d.last.sig == 0:
		return eventReread // it could not be read; perhaps now it can
	case !d.changed(f):
		return eventIgnored
	case ev.Has(OpAttrib) && d.arrivalsTold() && !d.pending.readNow && d.replaced(f):
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
	return eventReread
}

// createdAsRead reports whether the file created at name, by the facts f,
// is the one the last read accepted, or the last read made, found, as it
// found it, and that read was on the kernel's word that no writer was at
// work on it. A read held counts: an empty file, confirmed before it is
// handed on, was found with its creator gone as surely as a file accepted
// (held for that creator's close instead, it waited MaxWriterWait for a
// close that had come before the read).
func (d *Decider) createdAsRead(name string, f *Facts) bool {
	info := f.entry(name)
	if info == nil || !d.res.isFile(name) {
		return false
	}
	return d.last.sure && d.sameAsRead(info, d.last.info) || d.last.madeSure && d.sameAsRead(info, d.last.made)
}

// sameAsRead reports whether info is of the file read as read: the same
// inode, size and modification time.
func (d *Decider) sameAsRead(info, read fs.FileInfo) bool {
	return read != nil && d.cfg.Inodes.SameFile(info, read) && info.Size() == read.Size() && info.ModTime().Equal(read.ModTime())
}

// changed reports whether the subject's stat differs from the last read
// accepted.
func (d *Decider) changed(f *Facts) bool { return f.Subject != d.last.sig }

// asJudged reports whether a read is being judged (see laterWriter) and
// the subject's stat is the one that read took.
func (d *Decider) asJudged(f *Facts) bool {
	return d.last.judging != 0 && f.Subject == d.last.judging
}

// arrivalsTold reports whether a file that takes the watched file's place
// will be told of by an event of its own that says how it came: where the
// kernel tells a creation from a rename (and reports the creator's close),
// and the file's directory is watched. A file's own watch, standing in for
// a directory that cannot be listed, reports nothing of its successor.
func (d *Decider) arrivalsTold() bool {
	return d.cfg.Caps.Closes && d.wait.window > 0 && d.watches.refused[d.res.Home] == nil
}

// replaced reports whether the path no longer shows the file last read:
// it is missing, or another file is there. (The inode number alone cannot
// tell: a file created at once may be given the one just freed; its size
// most likely differs.)
func (d *Decider) replaced(f *Facts) bool {
	cur := f.file()
	if d.last.info == nil || len(d.cfg.Paths) != 1 {
		return true
	}
	return cur == nil || !d.cfg.Inodes.SameFile(cur, d.last.info) || cur.Size() != d.last.info.Size()
}

// act does what an event of kind on name asks.
func (d *Decider) act(kind eventKind, name string, f *Facts, now time.Time) {
	if kind != eventIgnored && kind != eventClosed {
		// A writer's close is the word of that writer on that file: after
		// anything else happened there, it vouches for nothing.
		d.pending.readNow = false
	}
	switch kind {
	case eventMade, eventMovedIn, eventGone, eventReread:
		d.writer.restat = true
	}
	switch kind {
	case eventSetChange:
		d.wait.written(ReasonEvent, false, now)
	case eventMade:
		d.made(name, f, now)
	case eventMovedIn:
		d.wait.swapSeen()
		d.pending.reread = true
	case eventGone:
		d.fileGone(now)
	case eventReread:
		d.pending.reread = true
	case eventWrite:
		d.written(name, f, now)
	case eventClosed:
		d.wait.writerClosed()
		d.pending.readNow = true // what the writer wrote is all there; if that is nothing, see emptyClosed
	}
}

// watchGone takes the kernel's word that the watch of a path went with
// it: the loop forgets it, and watches the path afresh, even if it is
// back. A directory moved away takes the watches below it along: whatever
// takes its place, they watch the old tree.
func (d *Decider) watchGone(name string) {
	d.pending.drop = append(d.pending.drop, name)
	if !d.res.isFile(name) && name != d.keptWatch() {
		d.pending.rewatch = true
		d.watchesGone++
	}
}

// fileGone takes the removal of the file itself, once the path no longer
// shows it (a rename-over read already leaves its old file's removal
// nothing to say). Whatever takes its place comes with an event of its
// own, read as that event says: a rename's at once, a creation's at its
// writer's close. Read now, on this event, it could be caught half-written
// (rm config.yaml; slow-producer > config.yaml); if nothing comes, the
// confirmation's end reads it and reports it missing. A wait for writers
// that runs may be for the file that went: the path is resolved again,
// which ends it if so (see refreshing), and reads nothing while it runs.
func (d *Decider) fileGone(now time.Time) {
	d.filesGone++
	d.wait.confirm(ReasonEvent, now)
	if d.wait.blocksReads() {
		d.pending.reread = true
	}
}

// written takes an in-place write of the file at name: it is read once the
// writes are done. Which file a wait for them is for is looked up when it
// begins, and again if the path may have moved since.
func (d *Decider) written(name string, f *Facts, now time.Time) {
	if d.wait.window == 0 {
		d.pending.reread = true
		return
	}
	if d.writer.file == nil || d.writer.restat || !d.wait.blocksReads() {
		d.beginWriter(d.writtenFile(name, f), name)
	}
	d.writer.writes++
	d.wait.written(ReasonWrite, d.cfg.Caps.Closes, now)
}

// writtenFile is the file written under name, by the facts f: the file
// under name itself, or, where a symlink has taken its name since, the
// file the path leads to. (Not the path's file for a write of a name the
// path led to before it was retargeted: that write is no writer of it.)
func (d *Decider) writtenFile(name string, f *Facts) fs.FileInfo {
	if info := f.entry(name); info != nil && info.Mode().IsRegular() {
		return info
	}
	if d.res.One && d.res.isFile(name) {
		return f.file()
	}
	return nil
}

// made decides how to read what was created where the path leads, not
// renamed there. A directory or a symlink is looked at at once. A regular
// file's creator may still be writing it (rm config.yaml; slow-producer >
// config.yaml). A file with nothing in it yet is read at its creator's
// close, however long the creator takes to start; one already written, at
// the close or after a quiet window (its writes, if any are still to come,
// turn that into a wait for the close). A hard link made there brings a
// file complete, as a rename does: read at once.
func (d *Decider) made(name string, f *Facts, now time.Time) {
	info := f.entry(name)
	switch {
	case info == nil || !info.Mode().IsRegular():
		d.pending.reread = true
	case d.cfg.Inodes.Links(info) > 1:
		d.wait.swapSeen()
		d.pending.reread = true
	case info.Size() == 0 && d.cfg.Caps.Closes:
		d.beginWriter(info, name)
		d.writer.writes++
		d.wait.emptyWhileOpen(ReasonWrite, d.creatorsCloseTold(), now)
	default:
		d.beginWriter(info, name)
		d.writer.writes++
		d.wait.written(ReasonWrite, d.cfg.Caps.Closes, now)
	}
}

// creatorsCloseTold reports whether the close of the file a wait just began
// for, at its creation's event, will be told. A file created has a watch of
// its own already only if it was added after the creation (by a refresh
// between the creation and the turn of its event): its creator may have
// closed it before, unheard, unless its directory reports its entries'
// closes. The file is then read again a window later, asking the kernel,
// not held for MaxWriterWait for a close that came.
func (d *Decider) creatorsCloseTold() bool {
	return d.writer.watch == 0 || d.watches.closesOf(d.writer.path)
}

// beginWriter notes the file a wait for writers begins for, and the watch
// of it by itself that the path has already, if any: not one the kernel
// dropped, as an event taken in the same batch said, which the loop
// forgets once the batch is judged, and on which nothing comes after.
func (d *Decider) beginWriter(info fs.FileInfo, path string) {
	own := 0
	if info != nil && path != "" && !slices.Contains(d.pending.drop, path) {
		own = d.watches.own(path, info)
	}
	d.writer.begin(info, path, d.cfg.Caps.Files, own)
}
