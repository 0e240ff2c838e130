package decide

import (
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"time"
)

// fakeFile is a stat: a file's identity, size, time and links.
type fakeFile struct {
	ino   uint64
	size  int64
	mtime time.Time
	links uint64
	mode  fs.FileMode // 0: a regular file
}

func (f fakeFile) Name() string       { return "f" }
func (f fakeFile) Size() int64        { return f.size }
func (f fakeFile) Mode() fs.FileMode  { return f.mode }
func (f fakeFile) ModTime() time.Time { return f.mtime }
func (f fakeFile) IsDir() bool        { return f.mode.IsDir() }
func (f fakeFile) Sys() any           { return nil }

// fakeStats reads fakeFiles: one device, the inode number as given.
type fakeStats struct{}

func (fakeStats) SameFile(a, b fs.FileInfo) bool {
	fa, ok1 := a.(fakeFile)
	fb, ok2 := b.(fakeFile)
	return ok1 && ok2 && fa.ino == fb.ino
}

func (fakeStats) ID(info fs.FileInfo) (dev, ino uint64) {
	if f, ok := info.(fakeFile); ok {
		return 1, f.ino
	}
	return 0, 0
}

func (fakeStats) Links(info fs.FileInfo) uint64 {
	if f, ok := info.(fakeFile); ok {
		return max(f.links, 1)
	}
	return 1
}

const (
	dir  = "/etc/app"
	path = "/etc/app/config.yaml"
)

var (
	t0    = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	linux = Caps{Closes: true, Ancestors: true, Files: true}
	// counting is Linux's inotify, with the file's opens reported (the
	// backend's own caps).
	counting = Caps{Closes: true, Ancestors: true, Files: true, Opens: true}
	// the file the test decider read last: inode 10, 3 bytes, written an
	// hour before t0.
	readFile = fakeFile{ino: 10, size: 3, mtime: t0.Add(-time.Hour)}
)

// config is the test decider's: one file, /etc/app/config.yaml, a quiet
// window of 100 ms.
func config(c Caps) Config {
	return Config{Window: 100 * time.Millisecond, Caps: c, Events: true, Paths: []string{path}, Inodes: fakeStats{},
		RetryMin: 25 * time.Millisecond, RetryMax: 3 * time.Second, Seed: 1}
}

// resolution is /etc/app/config.yaml's, a plain file in /etc/app.
func resolution(file fs.FileInfo) Resolution {
	return Resolution{Names: map[string]bool{dir: true, path: true}, Dirs: []string{dir}, Files: []string{path},
		Home: dir, HomeParent: "/etc", Atomic: true, One: true, File: file}
}

// facts says the path leads to file, whose signature is sig.
func facts(file fs.FileInfo, sig Signature) Facts {
	return Facts{Paths: []fs.FileInfo{file}, Subject: sig}
}

// withEntry adds the lstat of a name.
func (f Facts) withEntry(name string, info fs.FileInfo) Facts {
	f.Entries = append(f.Entries, Entry{Name: name, Info: info})
	return f
}

// whole is a read of the file in full, as its stat says.
func whole(why Reason, file fakeFile, sig Signature) Read {
	return Read{Why: why, Info: file, Sig: sig, Size: file.size, Empty: file.size == 0, ModTime: file.mtime}
}

// withWriters is r with what the kernel said of its writers.
func withWriters(r Read, w Writers) Read {
	r.Writers = w
	return r
}

// stamped is r, with the file's stamp once read, on a filesystem whose
// change times tell every change.
func stamped(r Read, st Stamp) Read {
	r.Stamp, r.FineTimes = st, true
	return r
}

// testDecider is a decider of /etc/app/config.yaml (caps c) whose loop is
// open and has read the file once (sig 7), with its directory and the file
// watched by itself where c allows (watches 1 and 2; where it does not,
// the directory reports the file's writes).
func testDecider(c Caps) *Decider {
	d := New(config(c))
	d.res = resolution(readFile)
	d.last = lastRead{sig: 7, readSig: 7, info: readFile}
	// Its reads, like its tests', say nothing of writers: the kernel does
	// not say, and the file's directory reports its entries' closes.
	d.watches.closes = true
	d.watches.watched[dir], d.watches.ids[dir] = watchDir|WatchCloses, 1
	if !c.Files {
		// The file cannot be watched by itself: its directory reports its
		// writes (fsnotify's caps).
		d.watches.watched[dir] = watchDirFiles | WatchCloses
	}
	if c.Files {
		d.watches.watched[path], d.watches.ids[path], d.watches.fileOf[path] = watchFile, 2, readFile
		if c.Opens {
			d.watches.watched[path] |= WatchOpens
		}
	}
	return d
}

// summary sums a Decision up in a line, for tables: its effects, then its
// action, then when the decider is to be told the time, from now.
func summary(dec Decision, now time.Time) string {
	var parts []string
	switch dec.Forward {
	case ForwardRead:
		parts = append(parts, "forward read")
	case ForwardFailure:
		parts = append(parts, "forward failure")
	}
	if len(dec.Dropped) > 0 {
		parts = append(parts, "dropped "+strings.Join(dec.Dropped, ","))
	}
	if dec.Unchanged {
		parts = append(parts, "unchanged")
	}
	if len(dec.Remove) > 0 {
		rm := append([]string(nil), dec.Remove...)
		sort.Strings(rm)
		parts = append(parts, "remove "+strings.Join(rm, ","))
	}
	if dec.Prune {
		parts = append(parts, "prune")
	}
	parts = append(parts, action(dec.Next))
	if !dec.WakeAt.IsZero() {
		parts = append(parts, "wake +"+dec.WakeAt.Sub(now).String())
	}
	return strings.Join(parts, "; ")
}

// action describes an action.
func action(a Action) string {
	switch a.Kind {
	case Resolve:
		if a.FromRoot {
			return "resolve from root"
		}
		return "resolve"
	case ReadNow:
		out := "read " + string(a.Why)
		if !a.Ask {
			out += ", counted" // the kernel is not asked: see openers
		}
		if a.First {
			out += ", first" // before the path is resolved again: see readsFirst
		}
		return out
	case AddWatch:
		return "add " + a.Path + " (" + a.Report.String() + ")"
	case AddOwnWatch:
		return "add own " + a.Path
	case AskInode:
		return fmt.Sprintf("ask inode %d", a.Watch)
	case Fail:
		return "fail: " + a.Err.Error()
	case TakeQueue:
		if a.AwaitTruncation {
			return "take queue after truncation"
		}
		if a.StampFirst {
			return "stamp, take queue"
		}
	}
	return a.Kind.String()
}

// Shorthands for Step, one per kind of input, as the tables read best:
// test-only, the loop calls Step.

func (d *Decider) Open(now time.Time) Decision { return d.Step(Input{Kind: InputOpen, Now: now}) }

func (d *Decider) Start(r Read, now time.Time) Decision {
	return d.Step(Input{Kind: InputStart, Read: r, Now: now})
}

func (d *Decider) Events(evs []Event, f Facts, now time.Time) (Decision, int) {
	dec := d.Step(Input{Kind: InputEvents, Events: evs, Facts: f, Now: now})
	return dec, dec.Taken
}

func (d *Decider) Event(ev Event, f Facts, now time.Time) Decision {
	dec, _ := d.Events([]Event{ev}, f, now)
	return dec
}

func (d *Decider) Timer(now time.Time) Decision { return d.Step(Input{Kind: InputTimer, Now: now}) }

func (d *Decider) Look(why Reason, force bool, st Signature, now time.Time) Decision {
	return d.Step(Input{Kind: InputLook, Why: why, Force: force, Stat: st, Now: now})
}

func (d *Decider) Resolved(r Resolution, unheard bool, file fs.FileInfo, now time.Time) Decision {
	return d.Step(Input{Kind: InputResolved, Resolution: r, Unheard: unheard, File: file, Now: now})
}

func (d *Decider) Read(r Read, now time.Time) Decision {
	return d.Step(Input{Kind: InputRead, Read: r, Now: now})
}

func (d *Decider) Queue(q Queue, now time.Time) Decision {
	return d.Step(Input{Kind: InputQueue, Queue: q, Now: now})
}

func (d *Decider) Added(res AddResult, now time.Time) Decision {
	return d.Step(Input{Kind: InputAdded, Add: res, Now: now})
}

func (d *Decider) OwnWatchAdded(res AddResult, after fs.FileInfo, w Writers, now time.Time) Decision {
	return d.Step(Input{Kind: InputOwnWatchAdded, Add: res, File: after, Writers: w, Now: now})
}

func (d *Decider) InodeOf(of WatchedInode, known bool, now time.Time) Decision {
	return d.Step(Input{Kind: InputInode, Inode: of, Known: known, Now: now})
}

func (d *Decider) PathChecked(moved bool, st Signature, now time.Time) Decision {
	return d.Step(Input{Kind: InputPathChecked, Moved: moved, Stat: st, Now: now})
}
