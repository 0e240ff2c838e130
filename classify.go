package file

import (
	"io/fs"
	"slices"
	"time"
)

// eventKind is what an event asks of a session. Events are only hints:
// which entry changed says whether and when to look again, never what
// changed. The judge classifies each event, then acts on its kind.
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

// lastRead is what the session's last reads found: what events' stats are
// compared with.
type lastRead struct {
	sig     signature   // the stat of the last read believed; zero if it failed
	readSig signature   // the stat of the last read made, believed or not; zero if it failed
	info    fs.FileInfo // the file of the last read believed; nil for a set, or if it failed
	judging signature   // while the events queued at a read are judged, that read's stat; zero otherwise
}

// classifier says what a relevant event asks for, from the judge's state
// when the event is taken and the facts of the moment.
type classifier struct {
	view    *sight
	caps    caps
	window  bool // in-place writes are waited for (the quiet window is not zero)
	paths   []string
	last    *lastRead
	waiting waitState
	readNow bool // a writer's close asks for a read
	f       facts
}

// kind says what a relevant event on name asks for.
func (c classifier) kind(ev event, name string) eventKind {
	closes := c.caps.closes && c.window
	switch {
	case !c.view.atomic && name != c.view.swap && c.window:
		// A set's files may be rewritten one by one: it is read once it
		// has settled, unless a kubelet swap updated all of them at once.
		if ev.has(opCreate|opRemove|opWrite) || c.last.sig == 0 || c.changed() {
			return eventSetChange
		}
		return eventIgnored
	case ev.has(opMade) && closes:
		return eventMade
	case ev.has(opCreate) && !ev.has(opMade) && c.caps.closes:
		// Where creates and renames look alike, a create is only a look.
		return eventMovedIn
	case ev.has(opRemove) && !ev.has(opCreate) && slices.Contains(c.view.files, name):
		if c.asJudged() {
			return eventIgnored // see touch
		}
		if c.arrivalsTold() && c.changed() {
			return eventGone
		}
		return eventLook
	case ev.has(opCreate | opRemove):
		return eventLook
	case ev.has(opWrite|opClose) && !c.ofFileRead(name):
		// Queued for a file the path led to before: its writer is not
		// this file's, nor its close the end of this file's writes.
		return c.touch(ev, name)
	case ev.has(opWrite):
		return eventWrite
	case ev.has(opClose) && (c.waiting != waitNone || c.readNow):
		// The same close told again, by the file's own watch after its
		// directory's, leaves the read it asked for standing: nothing
		// happened in between.
		return eventClosed
	case ev.has(opClose | opAttrib):
		return c.touch(ev, name)
	}
	return eventIgnored
}

// ofFileRead reports whether an event on name is about the file the path
// leads to: one the last resolution found, or, where that resolution is
// stale by now (an event taken before the refresh it asks for), the file
// the path names now. An event under another name was queued for a file
// the path led to before (a symlink retargeted since, a directory made
// again): its writes and its writer's close say nothing of this file.
func (c classifier) ofFileRead(name string) bool {
	if slices.Contains(c.view.files, name) {
		return true
	}
	info := c.f.lstat(name)
	if info == nil || !info.Mode().IsRegular() {
		return false
	}
	for _, p := range c.paths {
		if cur := c.f.stat(p); cur != nil && sameFile(cur, info) {
			return true
		}
	}
	return false
}

// touch says what a close with no wait for it (the watch came after the
// write), a chmod, a touch, a link made or removed ask for: the file
// changed only if its stat did, or if it could not be read and perhaps now
// can. (Reading on every such event would let our own reads wake us,
// without end on a strictatime mount.)
func (c classifier) touch(ev event, name string) eventKind {
	switch {
	case c.asJudged() && slices.Contains(c.view.files, name):
		// An event of the file, taken with the events queued at a read,
		// and the file is as that read found it: what the event tells of,
		// the read saw (the same close told again by the file's own watch
		// after its directory's; a file renamed over telling of its own
		// removal). Whether the read is believed is for its judgment to
		// say. (One of a directory on the way is no news of the file, but
		// may make that judgment read again: see judge.laterWriter.)
		return eventIgnored
	case c.last.sig == 0:
		return eventLook // it could not be read; perhaps now it can
	case !c.changed():
		return eventIgnored
	case ev.has(opAttrib) && c.arrivalsTold() && !c.readNow && c.replaced():
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

// changed reports whether the subject's stat differs from the last read
// believed.
func (c classifier) changed() bool { return c.f.subject() != c.last.sig }

// asJudged reports whether a read is being judged (see judge.laterWriter)
// and the subject's stat is the one that read took.
func (c classifier) asJudged() bool {
	return c.last.judging != 0 && c.f.subject() == c.last.judging
}

// arrivalsTold reports whether a file that takes the watched file's place
// will be told of by an event of its own that says how it came: where the
// kernel tells a creation from a rename (and reports the creator's close),
// and the file's directory is watched. A file's own watch, standing in for
// a directory that cannot be listed, reports nothing of its successor.
func (c classifier) arrivalsTold() bool {
	return c.caps.closes && c.window && !c.f.refused(c.view.home)
}

// replaced reports whether the path no longer shows the file last read:
// it is missing, or another file is there. (The inode number alone cannot
// tell: a file created at once may be given the one just freed; its size
// most likely differs.)
func (c classifier) replaced() bool {
	cur, one := fileNow(c.paths, c.f)
	if c.last.info == nil || !one {
		return true
	}
	return cur == nil || !sameFile(cur, c.last.info) || cur.Size() != c.last.info.Size()
}

// fileNowOrNone is fileNow, nil for a set.
func fileNowOrNone(paths []string, f facts) fs.FileInfo {
	info, _ := fileNow(paths, f)
	return info
}

// fileNow is the file paths, a subject's, leads to now: nil if there is
// none. one is false for a set, which has no one file.
func fileNow(paths []string, f facts) (info fs.FileInfo, one bool) {
	if len(paths) != 1 {
		return nil, false
	}
	return f.stat(paths[0]), true
}

// look decides what a look does, given the subject's stat st and the
// quiet window: the
// periodic re-check, the safety net, and Recheck's look now (force). The
// re-check costs a stat when nothing changed; otherwise, and always when
// forced, every watch is added again (in case one was lost without an
// event) and the file read: at once if the stat is as the last read left
// it (a forced look may know what the stat cannot show, such as a
// filesystem caching it), once writes have had a quiet window to finish if
// not.
func (l *lastRead) look(force bool, st signature, window time.Duration) lookKind {
	unchanged := st != 0 && st == l.sig
	switch {
	case unchanged && !force:
		return lookNothing
	case unchanged:
		return lookRead
	case window > 0 && st != 0:
		return lookGuess
	}
	return lookReadNow
}
