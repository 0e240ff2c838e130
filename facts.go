package file

import (
	"io/fs"
	"os"

	"github.com/keepwatch/file/internal/decide"
	"github.com/keepwatch/file/internal/osfile"
)

// eventFacts gathers, from the disk, the facts the decider needs for an
// event or a batch of them (Decider.Needs): the stat of each of the
// subject's paths and its signature, and the lstat of the names events
// ask about. It keeps its storage from one gathering to the next: what it
// returns is valid until it gathers again.
type eventFacts struct {
	subj  subject
	paths []string // the subject's paths, as the decider knows them
	f     decide.Facts
}

func newEventFacts(subj subject) *eventFacts {
	return &eventFacts{subj: subj, paths: subj.paths()}
}

// gather returns the facts evs need, as d says. The events all happened
// before it is called: one stat of a path answers for all of them.
func (e *eventFacts) gather(evs []decide.Event, d *decide.Decider) decide.Facts {
	e.reset()
	stats := false
	for _, ev := range evs {
		need := d.Needs(ev)
		stats = stats || need.Stats
		if need.Entry && !e.has(ev.Name) {
			e.f.Entries = append(e.f.Entries, decide.Entry{Name: ev.Name, Info: lstatOrNil(ev.Name)})
		}
	}
	if stats {
		e.statSubject()
	}
	return e.f
}

// gatherFirst returns the events at the head of evs that need no facts,
// if there are any, with none; otherwise evs, with the facts they need.
func (e *eventFacts) gatherFirst(evs []decide.Event, d *decide.Decider) ([]decide.Event, decide.Facts) {
	n := 0
	for n < len(evs) && d.Needs(evs[n]) == (decide.Needs{}) {
		n++
	}
	if n > 0 {
		e.reset()
		return evs[:n], e.f
	}
	return evs, e.gather(evs, d)
}

// reset empties the facts, keeping their storage.
func (e *eventFacts) reset() {
	e.f.Paths, e.f.Entries, e.f.Subject = e.f.Paths[:0], e.f.Entries[:0], 0
}

// fileStat is the stat of a single file's path that the last gathering
// took; nil for a set, or if it took none or found nothing.
func (e *eventFacts) fileStat() fs.FileInfo {
	if _, one := e.subj.(*fileSubject); !one || len(e.f.Paths) != 1 {
		return nil
	}
	return e.f.Paths[0]
}

// has reports whether the lstat of name was gathered already.
func (e *eventFacts) has(name string) bool {
	for _, en := range e.f.Entries {
		if en.Name == name {
			return true
		}
	}
	return false
}

// statSubject stats each of the subject's paths, and signs the subject. A
// path whose lstat was gathered already, for an event on it, and is not a
// symlink's (or found nothing), has that for its stat: an in-place write's
// event asks for both, of the same file, on the way to the callback.
func (e *eventFacts) statSubject() {
	for _, p := range e.paths {
		e.f.Paths = append(e.f.Paths, e.statOf(p))
	}
	if _, one := e.subj.(*fileSubject); one {
		// One file: its stat is the one the subject's stat asks for too.
		if info := e.f.Paths[0]; info != nil {
			e.f.Subject = signOf(0, "", info)
		}
		return
	}
	e.f.Subject = e.subj.stat()
}

// statOf is the stat of the subject's path p: its lstat gathered for an
// event, where that says what a stat would, or a stat of its own.
func (e *eventFacts) statOf(p string) fs.FileInfo {
	for _, en := range e.f.Entries {
		if en.Name == p && (en.Info == nil || en.Info.Mode()&fs.ModeSymlink == 0) {
			return en.Info
		}
	}
	return statOrNil(p)
}

func statOrNil(path string) fs.FileInfo {
	info, err := os.Stat(path)
	if err != nil {
		return nil
	}
	return info
}

func lstatOrNil(path string) fs.FileInfo {
	info, err := os.Lstat(path)
	if err != nil {
		return nil
	}
	return info
}

// platformInodes tells the decider what this platform's stats say of
// files' inodes (decide.Inodes).
type platformInodes struct{}

func (platformInodes) SameFile(a, b fs.FileInfo) bool        { return osfile.SameFile(a, b) }
func (platformInodes) ID(info fs.FileInfo) (dev, ino uint64) { return osfile.ID(info) }
func (platformInodes) Links(info fs.FileInfo) uint64         { return osfile.LinkCount(info) }
