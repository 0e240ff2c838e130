package decide

import (
	"io/fs"
	"slices"
)

// Facts is what the loop found on disk for one input: an event, or the
// events queued at a read, all of which happened before the facts were
// gathered, so that one set of facts answers for all of them. Needs
// says what an event needs.
type Facts struct {
	// Paths is what each of the subject's paths (Config.Paths) leads to
	// now, following symlinks; a nil entry: nothing there.
	Paths []fs.FileInfo
	// Subject sums up the stat of everything the subject reads, as a read
	// would sign it; zero if it cannot be stat'ed.
	Subject Signature
	// Entries is the lstat of each name an event needs one of.
	Entries []Entry
}

// Entry is the lstat of a name an event is about; a nil Info: nothing is
// there.
type Entry struct {
	Name string
	Info fs.FileInfo
}

// entry is the lstat of name, nil if it was not gathered or nothing is
// there.
func (f *Facts) entry(name string) fs.FileInfo {
	i := slices.IndexFunc(f.Entries, func(e Entry) bool { return e.Name == name })
	if i < 0 {
		return nil
	}
	return f.Entries[i].Info
}

// file is what the one path of a single file's subject leads to now; nil
// for a set, or if nothing is there.
func (f *Facts) file() fs.FileInfo {
	if len(f.Paths) != 1 {
		return nil
	}
	return f.Paths[0]
}

// Needs is which facts an event needs gathered.
type Needs struct {
	Stats bool // Paths and Subject
	Entry bool // the event's name's lstat, in Entries
}

// needsFacts says which facts an event needs, where the path's last
// resolution was r: none for lost events; the event's own name's lstat for
// a file created, and for a write or close under a name the resolution did
// not lead to (of a file the path led to before, or of a hard link), or of
// a set's file; the subject's stats for anything but a creation or a
// rename of a whole file.
func needsFacts(ev Event, r *Resolution) Needs {
	if ev.Has(OpRescan) {
		return Needs{}
	}
	return Needs{
		Stats: ev.Has(OpRemove|OpWrite|OpClose|OpAttrib) || !r.Atomic,
		Entry: ev.Has(OpMade|OpWrite) || ev.Has(OpClose) && (!r.One || !r.isFile(ev.Name)),
	}
}

// Needs says which facts the decider needs to take ev now: none for an
// event about nothing the path's resolution depends on, which is not of
// the awaited file's own watch either (a kubelet update's old payload
// going: seven events, which took a stat of the path for nothing), and
// otherwise what needsFacts says.
func (d *Decider) Needs(ev Event) Needs {
	if !d.res.relevant(ev.Name) && (ev.Watch == 0 || ev.Watch != d.writer.watch) {
		return Needs{}
	}
	return needsFacts(ev, &d.res)
}
