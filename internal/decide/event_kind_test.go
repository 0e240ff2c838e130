package decide

import (
	"io/fs"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// What each event is taken for, case by case of classify: the decider's
// state, the event, and the facts Needs gathers for it.
func TestEventKinds(t *testing.T) {
	other := "/etc/app/other.yaml"
	changed := fakeFile{ino: 10, size: 5, mtime: t0}
	for _, c := range []struct {
		name  string
		caps  Caps
		setup func(d *Decider)
		ev    Event
		f     Facts
		want  eventKind
	}{
		{"an entry nothing depends on", linux, nil, Event{Name: other, Op: OpCreate}, Facts{}, eventIgnored},
		{"the file written in place", linux, nil, Event{Name: path, Op: OpWrite}, facts(changed, 8), eventWrite},
		{"the file's writer closed it, while its writes are awaited", linux,
			func(d *Decider) { d.wait.written(ReasonWrite, true, t0) },
			Event{Name: path, Op: OpClose}, facts(changed, 8), eventClosed},
		{"a close with no wait, the stat as read: nothing changed", linux, nil, Event{Name: path, Op: OpClose}, facts(readFile, 7), eventIgnored},
		{"a close with no wait, the stat changed: look", linux, nil, Event{Name: path, Op: OpClose}, facts(changed, 8), eventReread},
		{"created there, where creations are told from renames", linux, nil, Event{Name: path, Op: OpCreate | OpMade},
			Facts{}.withEntry(path, fakeFile{ino: 11}), eventMade},
		{"renamed in", linux, nil, Event{Name: path, Op: OpCreate}, Facts{}, eventMovedIn},
		{"created or renamed in, where they look alike", Caps{}, nil, Event{Name: path, Op: OpCreate}, Facts{}, eventReread},
		{"removed, and the path no longer shows what was read", linux, nil, Event{Name: path, Op: OpRemove}, facts(nil, 0), eventGone},
		{"removed, where arrivals are not told apart: look", Caps{}, nil, Event{Name: path, Op: OpRemove}, facts(readFile, 7), eventReread},
		{"removed, the stat as the read being judged took it: the read saw it", linux,
			func(d *Decider) { d.last.judging = 7 }, Event{Name: path, Op: OpRemove}, facts(readFile, 7), eventIgnored},
		{"the link count dropped, another file in its place: the first word of a removal", linux, nil,
			Event{Name: path, Op: OpAttrib}, facts(fakeFile{ino: 11, size: 5}, 9), eventGone},
		{"a touch of the file, still there: look", linux, nil, Event{Name: path, Op: OpAttrib}, facts(fakeFile{ino: 10, size: 3, mtime: t0}, 9), eventReread},
		// The path led through other.yaml before (a link retargeted since).
		{"a write under a name the path led to before, of another file: the stat as read", linux,
			func(d *Decider) { d.res.Names[other] = true },
			Event{Name: other, Op: OpWrite}, facts(readFile, 7).withEntry(other, fakeFile{ino: 12}), eventIgnored},
		{"a write under a name the path led to before, of the same file (a hard link)", linux,
			func(d *Decider) { d.res.Names[other] = true },
			Event{Name: other, Op: OpWrite}, facts(readFile, 7).withEntry(other, fakeFile{ino: 10}), eventWrite},
		{"a directory on the way made again", linux, nil, Event{Name: dir, Op: OpCreate}, Facts{}, eventMovedIn},
		{"a set's file rewritten", Caps{}, func(d *Decider) { d.res.Atomic = false }, Event{Name: path, Op: OpWrite}, facts(changed, 8), eventSetChange},
		{"a set's file touched, its stat as read", Caps{}, func(d *Decider) { d.res.Atomic = false }, Event{Name: path, Op: OpAttrib}, facts(readFile, 7), eventIgnored},
		{"events lost", linux, nil, Event{Op: OpRescan}, Facts{}, eventReread},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := testDecider(c.caps)
			if c.setup != nil {
				c.setup(d)
			}
			assert.Equal(t, c.want, d.takeEvent(c.ev, &c.f, t0.Add(time.Millisecond)))
		})
	}
}

// The facts an event needs are those Needs asks for: every row of
// TestEventKinds is taken alike with only those facts and with every fact
// there is, stats and lstats of every name alike; so are events about
// nothing the path depends on (a kubelet update's old payload going),
// which need none, and those of the awaited file's own watch under a name
// the path no longer leads to, which do.
func TestNeedsAsksForWhatTheEventIsTakenWith(t *testing.T) {
	file := fakeFile{ino: 10, size: 5, mtime: t0}
	const old = "/etc/app/..2025_12_31/config.yaml"
	for _, ev := range []Event{
		{Name: path, Op: OpWrite}, {Name: path, Op: OpClose}, {Name: path, Op: OpCreate | OpMade},
		{Name: path, Op: OpCreate}, {Name: path, Op: OpRemove}, {Name: path, Op: OpAttrib},
		{Name: "/etc/app/other.yaml", Op: OpWrite}, {Name: dir, Op: OpCreate}, {Op: OpRescan},
		{Name: old, Op: OpRemove}, {Name: old, Op: OpAttrib}, {Name: old, Op: OpRemove | OpGone, Watch: 9},
		{Name: old, Op: OpWrite, Watch: 5}, {Name: old, Op: OpClose, Watch: 5}, {Name: old, Op: OpRemove | OpGone, Watch: 5},
	} {
		all := facts(file, 8).withEntry(ev.Name, file)
		for _, set := range []bool{false, true} {
			d, e := testDecider(linux), testDecider(linux)
			for _, x := range []*Decider{d, e} {
				x.res.Names["/etc/app/other.yaml"] = true
				x.res.Atomic = !set
				// A wait for the writer of the file the path led to
				// before, on its own watch, 5.
				x.wait.written(ReasonWrite, true, t0)
				x.writer.begin(file, old, true, 5)
			}
			need := d.Needs(ev)
			var some Facts
			if need.Stats {
				some.Paths, some.Subject = all.Paths, all.Subject
			}
			if need.Entry {
				some.Entries = all.Entries
			}
			assert.Equal(t, d.takeEvent(ev, &all, t0), e.takeEvent(ev, &some, t0), "%s %s (set: %v)", ev.Name, ev.Op, set)
			if ev.Name == old && ev.Watch != 5 {
				assert.Equal(t, Needs{}, need, "%s %s", ev.Name, ev.Op)
			}
		}
	}
}

// A file created where the path leads: its creator may still be at it.
func TestAFileMadeWhereThePathLeads(t *testing.T) {
	for _, c := range []struct {
		name    string
		entry   fs.FileInfo
		wait    waitState
		pending bool // looked at at once
	}{
		{"a directory or symlink: looked at at once", fakeFile{ino: 11, mode: fs.ModeDir}, waitNone, true},
		{"a hard link: complete, read at once", fakeFile{ino: 11, size: 5, links: 2}, waitNone, true},
		{"empty: read at its creator's close", fakeFile{ino: 11}, waitEmptyOpen, false},
		{"written already: at its close, or quiet", fakeFile{ino: 11, size: 5}, waitClose, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := testDecider(linux)
			f := Facts{}.withEntry(path, c.entry)
			d.takeEvent(Event{Name: path, Op: OpCreate | OpMade}, &f, t0)
			assert.Equal(t, c.wait, d.wait.state)
			assert.Equal(t, c.pending, d.pending.reread)
		})
	}
}
