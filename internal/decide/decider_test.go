package decide

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// step is one input handed to a decider at its time after t0, and the
// decision it must give, summed up (see summary).
type step struct {
	at   time.Duration
	in   func(d *Decider, now time.Time) Decision
	want string
}

func open(at time.Duration, want string) step {
	return step{at, func(d *Decider, now time.Time) Decision { return d.Open(now) }, want}
}

func start(at time.Duration, r Read, want string) step {
	return step{at, func(d *Decider, now time.Time) Decision { return d.Start(r, now) }, want}
}

func event(at time.Duration, ev Event, f Facts, want string) step {
	return step{at, func(d *Decider, now time.Time) Decision { return d.Event(ev, f, now) }, want}
}

func timer(at time.Duration, want string) step {
	return step{at, func(d *Decider, now time.Time) Decision { return d.Timer(now) }, want}
}

func look(at time.Duration, force bool, st Signature, want string) step {
	return step{at, func(d *Decider, now time.Time) Decision { return d.Look(ReasonRecheck, force, st, now) }, want}
}

func resolved(at time.Duration, r Resolution, unheard bool, file fs.FileInfo, want string) step {
	return step{at, func(d *Decider, now time.Time) Decision { return d.Resolved(r, unheard, file, now) }, want}
}

func read(at time.Duration, r Read, want string) step {
	return step{at, func(d *Decider, now time.Time) Decision { return d.Read(r, now) }, want}
}

func queue(at time.Duration, q Queue, want string) step {
	return step{at, func(d *Decider, now time.Time) Decision { return d.Queue(q, now) }, want}
}

func added(at time.Duration, id int, err error, kind ErrKind, want string) step {
	return step{at, func(d *Decider, now time.Time) Decision {
		return d.Added(AddResult{ID: id, Err: err, Kind: kind}, now)
	}, want}
}

// openedWithARefusedDirectory opens a decider of the path res resolves,
// whose directory refuses a watch (it cannot be listed): it is done
// without while the file's own watch stands in, tried again each round,
// the directory above reporting it.
func openedWithARefusedDirectory(res Resolution) []step {
	return []step{
		open(0, "resolve from root"),
		resolved(0, res, false, nil, "add /etc/app (self|names)"),
		added(0, 0, fs.ErrPermission, ErrRefused, "add /etc/app/config.yaml (self|content)"),
		added(0, 2, nil, 0, "resolve from root"),
		resolved(0, res, false, nil, "add /etc/app (self|names)"),
		added(0, 0, fs.ErrPermission, ErrRefused, "add /etc (self|names|content)"),
		added(0, 3, nil, 0, "resolve from root"),
		resolved(0, res, false, nil, "add /etc/app (self|names)"),
		added(0, 0, fs.ErrPermission, ErrRefused, "prune; nothing"),
	}
}

// firstReadMissing opens a decider of the path res resolves, whose first
// read finds no file: the file's directory is asked for its entries'
// closes, for whoever makes it (its own watch reporting fileWatch).
func firstReadMissing(res Resolution, fileWatch string) []step {
	return []step{
		open(0, "resolve from root"),
		resolved(0, res, false, nil, "add /etc/app (self|names)"),
		added(0, 1, nil, 0, "add /etc/app/config.yaml ("+fileWatch+")"),
		added(0, 2, nil, 0, "resolve from root"),
		resolved(0, res, false, nil, "prune; nothing"),
		start(0, Read{Why: ReasonStart, Err: fs.ErrNotExist, Missing: true}, "add /etc/app (self|names|closes); wake +100ms"),
		added(0, 1, nil, 0, "check path; wake +100ms"),
	}
}

// noCloses has the watch of the directory p report no closes of its
// entries from now on, as one added for its names alone does.
func noCloses(p string) step {
	return step{0, func(d *Decider, now time.Time) Decision {
		d.watches.watched[p] &^= WatchCloses
		return Decision{}
	}, "nothing"}
}

func ownAdded(at time.Duration, id int, after fs.FileInfo, want string) step {
	return step{at, func(d *Decider, now time.Time) Decision {
		return d.OwnWatchAdded(AddResult{ID: id}, after, WritersUnknown, now)
	}, want}
}

func ownAddedAsked(at time.Duration, id int, after fs.FileInfo, w Writers, want string) step {
	return step{at, func(d *Decider, now time.Time) Decision {
		return d.OwnWatchAdded(AddResult{ID: id}, after, w, now)
	}, want}
}

func inodeOf(at time.Duration, of WatchedInode, want string) step {
	return step{at, func(d *Decider, now time.Time) Decision { return d.InodeOf(of, true, now) }, want}
}

func checked(at time.Duration, moved bool, st Signature, want string) step {
	return step{at, func(d *Decider, now time.Time) Decision { return d.PathChecked(moved, st, now) }, want}
}

// A decider's phases, scenario by scenario: each input it takes, from the
// loop's opening to the reads its events ask for, and the decision each
// gives. The decider is testDecider's (the file read once, sig 7, its
// directory and itself watched), unless a scenario starts afresh.
func TestDecisions(t *testing.T) {
	res := resolution(readFile)
	written := fakeFile{ino: 10, size: 5, mtime: t0}
	asWritten := facts(written, 8)
	newFile := fakeFile{ino: 20, mtime: t0}
	moved := fakeFile{ino: 20, size: 4, mtime: t0}
	created, createdWritten := fakeFile{ino: 30, mtime: t0}, fakeFile{ino: 30, size: 5, mtime: t0.Add(time.Millisecond)}
	emptied := fakeFile{ino: 10, mtime: t0}
	noFile := Resolution{Names: res.Names, Dirs: []string{dir}, Home: dir, HomeParent: "/etc", Atomic: true, One: true}
	dirGone := Resolution{Names: map[string]bool{"/etc": true, dir: true, path: true}, Dirs: []string{"/etc"}, Home: "/etc", Atomic: true, One: true}
	boom := errors.New("boom")
	// A read that asked, no one holding the file, starts the count of its
	// openers; the next writer's open, write and close, counted: its
	// close stamps the file and takes the queue before the read.
	countedClose := func(more ...step) []step {
		return append([]step{
			event(0, Event{Name: path, Op: OpWrite, Watch: 2}, asWritten, "nothing; wake +1s"),
			event(time.Millisecond, Event{Name: path, Op: OpClose, Watch: 2}, asWritten, "resolve"),
			resolved(time.Millisecond, resolution(written), false, nil, "read write"),
			read(time.Millisecond, stamped(withWriters(whole(ReasonWrite, written, 8), WritersNone), 50), "forward read; prune; nothing"),
			event(time.Second, Event{Name: path, Op: OpOpen, Watch: 2}, Facts{}, "nothing"),
			event(time.Second, Event{Name: path, Op: OpWrite, Watch: 2}, asWritten, "nothing; wake +1s"),
			event(time.Second, Event{Name: path, Op: OpClose, Watch: 2}, asWritten, "stamp, take queue"),
		}, more...)
	}
	// Another writer's open, write and close, queued after the stamp.
	backToBack := Queue{Stamp: 51, Queued: []Event{{Name: path, Op: OpOpen, Watch: 2}, {Name: path, Op: OpWrite, Watch: 2}, {Name: path, Op: OpClose, Watch: 2}},
		QueuedFacts: asWritten}
	for _, c := range []struct {
		name   string
		afresh bool // a decider that has done nothing yet, not the test decider
		caps   Caps
		steps  []step
	}{
		{"opening: the path resolved and watched until it holds still", true, linux, []step{
			open(0, "resolve from root"),
			resolved(0, res, false, nil, "add /etc/app (self|names)"),
			added(0, 1, nil, 0, "add /etc/app/config.yaml (self|content)"),
			added(0, 2, nil, 0, "resolve from root"),
			resolved(0, res, false, nil, "prune; nothing"),
		}},
		{"opening: a directory that refuses a watch is done without while the file's own watch stands in", true, linux, openedWithARefusedDirectory(res)},
		{"a file renamed over after its read, in a directory that cannot be listed: the path's watch, of the old file, is kept as the path's, and the old file's end has the new one read", true, linux, append(openedWithARefusedDirectory(res),
			start(0, withWriters(whole(ReasonStart, readFile, 7), WritersNone), "forward read; add /etc/app (self|names)"),
			added(0, 0, fs.ErrPermission, ErrRefused, "resolve from root"),
			// The file is renamed over here: the resolution finds the new one.
			resolved(0, resolution(moved), false, nil, "add /etc/app (self|names)"),
			added(0, 0, fs.ErrPermission, ErrRefused, "prune; nothing"),
			event(time.Millisecond, Event{Name: path, Op: OpAttrib, Watch: 2}, facts(moved, 9), "resolve"),
			resolved(time.Millisecond, resolution(moved), false, nil, "read event"),
			read(time.Millisecond, withWriters(whole(ReasonEvent, moved, 9), WritersNone), "forward read; add /etc/app (self|names)"),
			// Read, the new file is watched by a watch of its own.
			added(time.Millisecond, 0, fs.ErrPermission, ErrRefused, "add /etc/app/config.yaml (self|content)"),
		)},
		{"a file renamed over before the first read, in a directory that cannot be listed: the new file, read, is watched by itself only at a read's adds, which a check of the path follows, and until then the old file's end is the path's", true, linux, append(openedWithARefusedDirectory(res),
			// Renamed over here: the first read finds the new file.
			start(0, withWriters(whole(ReasonStart, moved, 9), WritersNone), "forward read; add /etc/app (self|names)"),
			added(0, 0, fs.ErrPermission, ErrRefused, "resolve from root"),
			// Added here, the new file's watch would come after a write
			// made since the read, unheard, and nothing would check.
			resolved(0, resolution(moved), false, nil, "add /etc/app (self|names)"),
			added(0, 0, fs.ErrPermission, ErrRefused, "prune; nothing"),
			// The new file written in place (its stat 10), unheard; the old
			// file's link count dropping, on the path's watch, says the path
			// changed.
			event(time.Millisecond, Event{Name: path, Op: OpAttrib, Watch: 2}, facts(moved, 10), "resolve"),
			resolved(time.Millisecond, resolution(moved), false, nil, "read event"),
			read(time.Millisecond, withWriters(whole(ReasonEvent, moved, 10), WritersNone), "forward read; add /etc/app (self|names)"),
			added(time.Millisecond, 0, fs.ErrPermission, ErrRefused, "add /etc/app/config.yaml (self|content)"),
			added(time.Millisecond, 4, nil, 0, "resolve from root"),
			resolved(time.Millisecond, resolution(moved), false, nil, "add /etc/app (self|names)"),
			added(time.Millisecond, 0, fs.ErrPermission, ErrRefused, "prune; check path"),
			checked(time.Millisecond, false, 10, "prune; nothing"),
		)},
		{"opening: a plain directory on the way is watched for its own move alone, the file's for its entries, the file for its writes", true, linux, []step{
			open(0, "resolve from root"),
			resolved(0, withSearched(res, "/", "/etc", dir), false, nil, "add /etc/app (self|names)"),
			added(0, 1, nil, 0, "add / (self)"),
			added(0, 2, nil, 0, "add /etc (self)"),
			added(0, 3, nil, 0, "add /etc/app/config.yaml (self|content)"),
			added(0, 4, nil, 0, "resolve from root"),
		}},
		{"opening: a file that refuses its own watch has its directory report its writes", true, linux, []step{
			open(0, "resolve from root"),
			resolved(0, res, false, nil, "add /etc/app (self|names)"),
			added(0, 1, nil, 0, "add /etc/app/config.yaml (self|content)"),
			added(0, 0, fs.ErrPermission, ErrRefused, "resolve from root"),
			resolved(0, res, false, nil, "add /etc/app (self|names|content)"),
		}},
		{"opening: any other failure to add a watch ends the loop", true, linux, []step{
			open(0, "resolve from root"),
			resolved(0, res, false, nil, "add /etc/app (self|names)"),
			added(0, 0, boom, ErrOther, "fail: add watch on /etc/app: boom"),
		}},
		{"opening: a path that vanished as it was watched is resolved again", true, linux, []step{
			open(0, "resolve from root"),
			resolved(0, res, false, nil, "add /etc/app (self|names)"),
			added(0, 0, fs.ErrNotExist, ErrVanished, "resolve from root"),
			resolved(0, res, false, nil, "add /etc/app (self|names)"),
		}},
		{"the first read: accepted once no later writer began", false, linux, []step{
			start(0, whole(ReasonStart, readFile, 7), "take queue"),
			queue(0, Queue{}, "forward read; prune; nothing"),
		}},
		{"an in-place write: read at its writer's close", false, linux, []step{
			event(0, Event{Name: path, Op: OpWrite}, asWritten, "nothing; wake +1s"),
			event(10*time.Millisecond, Event{Name: path, Op: OpClose}, asWritten, "resolve"),
			resolved(10*time.Millisecond, res, false, nil, "read write"),
			read(10*time.Millisecond, whole(ReasonWrite, written, 8), "take queue"),
			queue(10*time.Millisecond, Queue{QueuedFacts: asWritten, LateFacts: asWritten}, "forward read; prune; nothing"),
		}},
		{"a writer that holds the file open: read after its pause", false, linux, []step{
			event(0, Event{Name: path, Op: OpWrite}, asWritten, "nothing; wake +1s"),
			timer(time.Second, "resolve"),
			resolved(time.Second, res, false, written, "read write"),
			read(time.Second, whole(ReasonWrite, written, 8), "take queue"),
			queue(time.Second, Queue{QueuedFacts: asWritten, LateFacts: asWritten}, "forward read; prune; nothing"),
		}},
		{"a later writer among the events queued at a read: the read waits for it", false, linux, []step{
			event(0, Event{Name: path, Op: OpClose}, asWritten, "resolve"),
			resolved(0, res, false, nil, "read event"),
			read(0, whole(ReasonEvent, written, 8), "take queue"),
			queue(0, Queue{Queued: []Event{{Name: path, Op: OpWrite}}, QueuedFacts: asWritten, LateFacts: asWritten},
				"prune; nothing; wake +1s"),
		}},
		{"a file removed: reported once it has stayed missing for a window", false, linux, []step{
			// Its own watch went with it.
			event(0, Event{Name: path, Op: OpRemove}, facts(nil, 0), "dropped /etc/app/config.yaml; nothing; wake +100ms"),
			timer(100*time.Millisecond, "resolve"),
			resolved(100*time.Millisecond, Resolution{Names: res.Names, Dirs: res.Dirs, Home: dir, HomeParent: "/etc", Atomic: true, One: true},
				false, nil, "read event"),
			read(100*time.Millisecond, Read{Why: ReasonEvent, Err: fs.ErrNotExist, Missing: true}, "take queue"),
			queue(100*time.Millisecond, Queue{QueuedFacts: facts(nil, 0), LateFacts: facts(nil, 0)}, "forward read; prune; nothing"),
		}},
		{"a read that failed for a reason of the process: told of, and retried after a backoff", false, linux, []step{
			event(0, Event{Name: path, Op: OpCreate}, Facts{}, "resolve"),
			resolved(0, res, false, nil, "read event"),
			read(0, Read{Why: ReasonEvent, Err: boom, Process: true}, "forward failure; prune; nothing; wake +19.093251ms"),
			timer(19093251*time.Nanosecond, "resolve"),
			resolved(19093251*time.Nanosecond, res, false, nil, "read event"),
			read(19093251*time.Nanosecond, whole(ReasonEvent, written, 8), "take queue"),
		}},
		{"a file created empty where the path leads: its own watch is asked for, and its close awaited", false, linux, []step{
			event(0, Event{Name: path, Op: OpCreate | OpMade}, Facts{}.withEntry(path, newFile), "add own /etc/app/config.yaml; wake +10s"),
			ownAdded(0, 5, newFile, "nothing; wake +10s"),
			event(time.Second, Event{Name: path, Op: OpClose, Watch: 5}, facts(newFile, 9), "resolve"),
		}},
		{"the awaited file gone right after its own watch's Add: the notifier says the watch was of it", false, linux, []step{
			event(0, Event{Name: path, Op: OpCreate | OpMade}, Facts{}.withEntry(path, newFile), "add own /etc/app/config.yaml; wake +10s"),
			ownAdded(0, 5, fakeFile{ino: 30, mode: fs.ModeSymlink}, "ask inode 5; wake +10s"),
			inodeOf(0, WatchedInode{Gone: true}, "nothing; wake +10s"),
			event(time.Second, Event{Name: path, Op: OpRemove | OpGone, Watch: 5}, facts(fakeFile{ino: 20, size: 9}, 9), "dropped /etc/app/config.yaml; resolve; wake +9s"),
		}},
		{"the re-check: nothing changed", false, linux, []step{
			look(0, false, 7, "unchanged; nothing"),
		}},
		{"the re-check: a change no event told of is read after a quiet window, with every watch added again", false, linux, []step{
			look(0, false, 8, "resolve from root"),
			resolved(0, res, false, nil, "add /etc/app (self|names|closes)"),
			added(0, 1, nil, 0, "add /etc/app/config.yaml (self|content)"),
			added(0, 2, nil, 0, "resolve from root"),
			resolved(0, res, false, nil, "prune; nothing; wake +100ms"),
			timer(100*time.Millisecond, "resolve"),
		}},
		{"a read's watches: added after it, and the path checked for having moved meanwhile", false, linux, []step{
			event(0, Event{Name: dir, Op: OpCreate}, Facts{}, "resolve"),
			resolved(0, Resolution{Names: res.Names, Dirs: []string{dir, "/srv"}, Files: res.Files, Home: dir, Atomic: true, One: true, File: readFile},
				false, nil, "read event"),
			read(0, whole(ReasonEvent, readFile, 7), "take queue"),
			queue(0, Queue{}, "forward read; add /srv (self|names)"),
			added(0, 3, nil, 0, "check path"),
			checked(0, true, 0, "prune; resolve from root"),
		}},
		{"a file renamed over is watched by itself once read, and its old file's end, on the old file's watch, is of no file of the path's", false, linux, []step{
			event(0, Event{Name: path, Op: OpCreate}, facts(moved, 9), "resolve"), // IN_MOVED_TO on its directory
			resolved(0, resolution(moved), false, nil, "read event"),
			read(0, whole(ReasonEvent, moved, 9), "take queue"),
			// The path's watch is the old file's: added again, it is this one's.
			queue(0, Queue{}, "forward read; add /etc/app/config.yaml (self|content)"),
			added(0, 3, nil, 0, "check path"),
			checked(0, false, 9, "prune; nothing"),
			// IN_DELETE_SELF and IN_IGNORED on the old file's watch: nothing
			// to forget or add again, nothing to read.
			event(0, Event{Name: path, Op: OpRemove | OpGone, Watch: 2}, facts(moved, 9), "nothing"),
			event(0, Event{Name: path, Op: OpRemove | OpGone, Watch: 2}, facts(moved, 9), "nothing"),
		}},
		{"a file renamed over and written in place at once: its old file's last word, on the old file's watch, neither drops the new file's watch nor ends the wait for its writer", false, linux, []step{
			event(0, Event{Name: path, Op: OpCreate}, facts(moved, 9), "resolve"),
			resolved(0, resolution(moved), false, nil, "read event"),
			read(0, whole(ReasonEvent, moved, 9), "take queue"),
			queue(0, Queue{}, "forward read; add /etc/app/config.yaml (self|content)"),
			added(0, 3, nil, 0, "check path"),
			checked(0, false, 9, "prune; nothing"),
			event(0, Event{Name: path, Op: OpAttrib, Watch: 2}, facts(moved, 9), "nothing"),
			event(time.Millisecond, Event{Name: path, Op: OpWrite, Watch: 3}, facts(moved, 10), "nothing; wake +1s"),
			// Taken as the path's watch's end, it had that watch removed and
			// added again, and the writer's close, which came in between,
			// was lost: the update waited MaxWriterWait (10 s).
			event(2*time.Millisecond, Event{Name: path, Op: OpRemove | OpGone, Watch: 2}, facts(moved, 10), "nothing; wake +999ms"),
			event(3*time.Millisecond, Event{Name: path, Op: OpClose, Watch: 3}, facts(moved, 10), "resolve"),
		}},
		{"a file renamed over whose own watch the kernel has no room for: its directory reports its writes from then on", false, linux, []step{
			event(0, Event{Name: path, Op: OpRemove | OpGone, Watch: 2}, facts(moved, 9), "dropped /etc/app/config.yaml; nothing; wake +100ms"),
			timer(100*time.Millisecond, "resolve"),
			resolved(100*time.Millisecond, resolution(moved), false, nil, "read event"),
			read(100*time.Millisecond, whole(ReasonEvent, moved, 9), "take queue"),
			queue(100*time.Millisecond, Queue{}, "forward read; add /etc/app/config.yaml (self|content)"),
			added(100*time.Millisecond, 0, syscall.ENOSPC, ErrLimited, "add /etc/app (self|names|content|closes)"),
			added(100*time.Millisecond, 1, nil, 0, "check path"),
			checked(100*time.Millisecond, false, 9, "prune; nothing"),
		}},
		{"a creator that closes before the new file's own watch is added, where the kernel does not say who writes: its close, through the directory, has the file read", false, linux, []step{
			event(0, Event{Name: path, Op: OpCreate | OpMade}, facts(created, 11).withEntry(path, created), "add own /etc/app/config.yaml; wake +10s"),
			ownAdded(time.Millisecond, 5, createdWritten, "nothing; wake +9.999s"),
			event(time.Millisecond, Event{Name: path, Op: OpClose, Watch: 1}, facts(createdWritten, 12), "resolve"),
			resolved(time.Millisecond, resolution(createdWritten), false, nil, "read write"),
			read(time.Millisecond, whole(ReasonWrite, createdWritten, 12), "take queue"),
			queue(time.Millisecond, Queue{}, "forward read; prune; nothing"),
		}},
		{"a creator that may have closed before the new file's own watch came, in a directory that does not report closes, where the kernel does not say who writes: the file is read a writer no event told of's pause later, not ten seconds later", false, linux, []step{
			noCloses(dir),
			event(0, Event{Name: path, Op: OpCreate | OpMade}, facts(created, 11).withEntry(path, created), "add own /etc/app/config.yaml; wake +10s"),
			ownAdded(time.Millisecond, 5, createdWritten, "nothing; wake +25ms"),
			timer(26*time.Millisecond, "resolve"),
			resolved(26*time.Millisecond, resolution(createdWritten), false, nil, "read write"),
			read(26*time.Millisecond, whole(ReasonWrite, createdWritten, 12), "take queue"),
			queue(26*time.Millisecond, Queue{}, "forward read; add /etc/app (self|names|closes)"),
		}},
		{"the first read where the kernel says who writes: the file's directory is not asked for its entries' closes", true, linux, []step{
			open(0, "resolve from root"),
			resolved(0, res, false, nil, "add /etc/app (self|names)"),
			added(0, 1, nil, 0, "add /etc/app/config.yaml (self|content)"),
			added(0, 2, nil, 0, "resolve from root"),
			resolved(0, res, false, nil, "prune; nothing"),
			start(0, withWriters(whole(ReasonStart, readFile, 7), WritersNone), "forward read; prune; nothing"),
		}},
		{"the first read where the kernel does not say who writes: the file's directory is asked for its entries' closes", true, linux, []step{
			open(0, "resolve from root"),
			resolved(0, res, false, nil, "add /etc/app (self|names)"),
			added(0, 1, nil, 0, "add /etc/app/config.yaml (self|content)"),
			added(0, 2, nil, 0, "resolve from root"),
			resolved(0, res, false, nil, "prune; nothing"),
			start(0, whole(ReasonStart, readFile, 7), "take queue"),
			queue(0, Queue{}, "forward read; add /etc/app (self|names|closes)"),
			added(0, 1, nil, 0, "check path"),
		}},
		{"the first read finds no file: the directory is asked for its entries' closes, for whoever makes it", true, linux, firstReadMissing(res, "self|content")},
		{"a file created empty whose creator the kernel still counts as its own watch comes (it closed a moment before): asked again 25 ms later, not held for ten seconds", false, linux, []step{
			event(0, Event{Name: path, Op: OpCreate | OpMade}, facts(created, 11).withEntry(path, created), "add own /etc/app/config.yaml; wake +10s"),
			ownAddedAsked(time.Millisecond, 5, created, WritersOpen, "nothing; wake +25ms"),
			timer(26*time.Millisecond, "resolve"),
			resolved(26*time.Millisecond, resolution(created), false, nil, "read write"),
			read(26*time.Millisecond, withWriters(whole(ReasonWrite, created, 11), WritersNone), "prune; nothing; wake +100ms"),
		}},
		{"a file created and written whose creator the kernel still counts as its own watch comes: asked again 25 ms later, not held for a second", false, linux, []step{
			event(0, Event{Name: path, Op: OpCreate | OpMade}, facts(createdWritten, 12).withEntry(path, createdWritten), "add own /etc/app/config.yaml; wake +1s"),
			ownAddedAsked(time.Millisecond, 5, createdWritten, WritersOpen, "nothing; wake +25ms"),
			timer(26*time.Millisecond, "resolve"),
			resolved(26*time.Millisecond, resolution(createdWritten), false, nil, "read write"),
			read(26*time.Millisecond, withWriters(whole(ReasonWrite, createdWritten, 12), WritersNone), "forward read; prune; nothing"),
		}},
		{"a file made after its resolution, found empty by the read with its creator holding it: asked again 25 ms later, once the path is watched, not held ten seconds for a close no watch was there to tell", false, linux, []step{
			event(0, Event{Name: path, Op: OpRemove | OpGone, Watch: 2}, Facts{Paths: []fs.FileInfo{nil}}, "dropped /etc/app/config.yaml; nothing; wake +100ms"),
			timer(100*time.Millisecond, "resolve"),
			resolved(100*time.Millisecond, noFile, false, nil, "read event"),
			read(100*time.Millisecond, withWriters(whole(ReasonEvent, created, 11), WritersOpen), "prune; nothing; wake +25ms"),
			timer(125*time.Millisecond, "resolve"),
			resolved(125*time.Millisecond, resolution(createdWritten), false, nil, "read event"),
			read(125*time.Millisecond, withWriters(whole(ReasonEvent, createdWritten, 12), WritersNone), "forward read; add /etc/app/config.yaml (self|content)"),
		}},
		{"a file made after its resolution, its creator still holding it empty when asked again: awaited as one heard, through its own watch", false, linux, []step{
			event(0, Event{Name: path, Op: OpRemove | OpGone, Watch: 2}, Facts{Paths: []fs.FileInfo{nil}}, "dropped /etc/app/config.yaml; nothing; wake +100ms"),
			timer(100*time.Millisecond, "resolve"),
			resolved(100*time.Millisecond, noFile, false, nil, "read event"),
			read(100*time.Millisecond, withWriters(whole(ReasonEvent, created, 11), WritersOpen), "prune; nothing; wake +25ms"),
			timer(125*time.Millisecond, "resolve"),
			resolved(125*time.Millisecond, resolution(created), false, nil, "read event"),
			read(125*time.Millisecond, withWriters(whole(ReasonEvent, created, 11), WritersOpen), "add own /etc/app/config.yaml; wake +9.975s"),
			ownAddedAsked(126*time.Millisecond, 5, created, WritersOpen, "prune; nothing; wake +25ms"),
		}},
		{"a file's creation taken after a read that found it whole, by the kernel's word: its creator was done, nothing waits for it", false, linux, []step{
			event(0, Event{Name: path, Op: OpRemove | OpGone, Watch: 2}, facts(createdWritten, 12), "dropped /etc/app/config.yaml; nothing; wake +100ms"),
			timer(100*time.Millisecond, "resolve"),
			resolved(100*time.Millisecond, resolution(createdWritten), false, nil, "read event"),
			read(100*time.Millisecond, withWriters(whole(ReasonEvent, createdWritten, 12), WritersNone), "forward read; add /etc/app/config.yaml (self|content)"),
			added(100*time.Millisecond, 6, nil, 0, "check path"),
			checked(100*time.Millisecond, false, 12, "prune; nothing"),
			event(101*time.Millisecond, Event{Name: path, Op: OpCreate | OpMade}, facts(createdWritten, 12).withEntry(path, createdWritten), "nothing"),
		}},
		{"a file's creation taken after a read that found it empty, by the kernel's word: its creator was done, and the empty file is confirmed a window after it was read, not held ten seconds for a close that came before the read (a kubelet volume's key made again by hand and emptied)", true, counting, append(firstReadMissing(res, "self|content|opens"),
			checked(time.Millisecond, true, 0, "prune; resolve from root; wake +99ms"),
			resolved(time.Millisecond, resolution(created), false, nil, "read event; wake +99ms"),
			read(time.Millisecond, stamped(withWriters(whole(ReasonEvent, created, 11), WritersNone), 60), "prune; nothing; wake +99ms"),
			event(2*time.Millisecond, Event{Name: path, Op: OpCreate | OpMade}, facts(created, 11).withEntry(path, created), "nothing; wake +98ms"),
			timer(100*time.Millisecond, "resolve"),
			resolved(100*time.Millisecond, resolution(created), false, nil, "read start"),
			read(100*time.Millisecond, stamped(withWriters(whole(ReasonStart, created, 11), WritersNone), 60), "forward read; add /etc/app/config.yaml (self|content|opens)"),
		)},
		{"where the kernel does not say who writes, a read the file's times have accepted starts the count of its openers: the next writer's close reads counted", false, counting, []step{
			event(0, Event{Name: path, Op: OpWrite, Watch: 2}, asWritten, "nothing; wake +1s"),
			event(time.Millisecond, Event{Name: path, Op: OpClose, Watch: 2}, asWritten, "resolve"),
			resolved(time.Millisecond, resolution(written), false, nil, "read write"),
			read(time.Millisecond, stamped(whole(ReasonWrite, written, 8), 50), "take queue"),
			queue(time.Millisecond, Queue{}, "forward read; prune; nothing"),
			event(time.Second, Event{Name: path, Op: OpWrite, Watch: 2}, asWritten, "nothing; wake +1s"),
			event(time.Second, Event{Name: path, Op: OpClose, Watch: 2}, asWritten, "resolve"),
			resolved(time.Second, resolution(written), false, nil, "stamp, take queue"),
			queue(time.Second, Queue{Stamp: 51}, "read write, counted"),
			read(time.Second, stamped(whole(ReasonWrite, written, 9), 51), "forward read; prune; nothing"),
		}},
		// The next writer's close reads with no lease, the queue taken
		// first, and the read goes on before the path is resolved.
		{"where the file's own watch tells its opens: a read that asked, and no one held the file, starts the count of its openers; a writer's close then reads first, counted, and is handed on before the path is resolved", false, counting, countedClose(
			queue(time.Second, Queue{Stamp: 51}, "read write, counted, first"),
			read(time.Second, stamped(whole(ReasonWrite, written, 9), 51), "forward read; resolve"),
			resolved(time.Second, resolution(written), false, nil, "prune; nothing"),
		)},
		{"back-to-back writers between the stamp and the queue: the file's stamp moved with them, and it is stamped and the queue taken again, not the read held for a writer no count has (an empty file waited 10 s for a close that had come)", false, counting, countedClose(
			queue(time.Second, backToBack, "stamp, take queue"),
			queue(time.Second, Queue{Stamp: 52}, "read write, counted, first"),
			read(time.Second, stamped(whole(ReasonWrite, written, 9), 52), "forward read; resolve"),
		)},
		{"writers back to back between the stamp and the queue, twice: the read asks the kernel", false, counting, countedClose(
			queue(time.Second, backToBack, "stamp, take queue"),
			queue(time.Second, Queue{Stamp: 52, Queued: []Event{{Name: path, Op: OpAttrib, Watch: 2}}, QueuedFacts: asWritten}, "read write, first"),
			read(time.Second, stamped(withWriters(whole(ReasonWrite, written, 9), WritersNone), 53), "forward read; resolve"),
		)},
		{"a file swapped in where the kernel said who writes: read first, asking, and handed on before the path is resolved", false, counting, []step{
			event(0, Event{Name: path, Op: OpWrite, Watch: 2}, asWritten, "nothing; wake +1s"),
			event(time.Millisecond, Event{Name: path, Op: OpClose, Watch: 2}, asWritten, "resolve"),
			resolved(time.Millisecond, resolution(written), false, nil, "read write"),
			read(time.Millisecond, stamped(withWriters(whole(ReasonWrite, written, 8), WritersNone), 50), "forward read; prune; nothing"),
			event(time.Second, Event{Name: path, Op: OpCreate}, facts(moved, 9), "read event, first"),
			read(time.Second, stamped(withWriters(whole(ReasonEvent, moved, 9), WritersNone), 60), "forward read; resolve"),
			// The path's own watch is the file's it replaced: added again, it
			// is this one's.
			resolved(time.Second, resolution(moved), false, nil, "add /etc/app/config.yaml (self|content|opens)"),
			added(time.Second, 3, nil, 0, "check path"),
			checked(time.Second, false, 9, "prune; nothing"),
		}},
		{"a read made first that the path no longer leads to by its resolution: read again, in the usual order, by a resolution from the root (one resumed could keep disagreeing)", false, counting, []step{
			event(0, Event{Name: path, Op: OpWrite, Watch: 2}, asWritten, "nothing; wake +1s"),
			event(time.Millisecond, Event{Name: path, Op: OpClose, Watch: 2}, asWritten, "resolve"),
			resolved(time.Millisecond, resolution(written), false, nil, "read write"),
			read(time.Millisecond, stamped(withWriters(whole(ReasonWrite, written, 8), WritersNone), 50), "forward read; prune; nothing"),
			event(time.Second, Event{Name: path, Op: OpCreate}, facts(moved, 9), "read event, first"),
			read(time.Second, stamped(withWriters(whole(ReasonEvent, moved, 9), WritersNone), 60), "forward read; resolve"),
			resolved(time.Second, resolution(fakeFile{ino: 12, size: 4, mtime: t0}), false, nil, "prune; resolve from root"),
			resolved(time.Second, resolution(fakeFile{ino: 12, size: 4, mtime: t0}), false, nil, "read event"),
		}},
		{"a read made first with a writer holding the file: set aside, and the refresh goes on in the usual order", false, counting, []step{
			event(0, Event{Name: path, Op: OpWrite, Watch: 2}, asWritten, "nothing; wake +1s"),
			event(time.Millisecond, Event{Name: path, Op: OpClose, Watch: 2}, asWritten, "resolve"),
			resolved(time.Millisecond, resolution(written), false, nil, "read write"),
			read(time.Millisecond, stamped(withWriters(whole(ReasonWrite, written, 8), WritersNone), 50), "forward read; prune; nothing"),
			event(time.Second, Event{Name: path, Op: OpCreate}, facts(moved, 9), "read event, first"),
			read(time.Second, stamped(withWriters(whole(ReasonEvent, moved, 9), WritersOpen), 60), "resolve"),
			resolved(time.Second, resolution(moved), false, nil, "read event"),
			read(time.Second, stamped(withWriters(whole(ReasonEvent, moved, 9), WritersOpen), 60), "add own /etc/app/config.yaml; wake +1s"),
		}},
		{"a counted read whose stamp moved since the queue: a writer began meanwhile, awaited as one heard writing, whose close reads", false, counting, []step{
			event(0, Event{Name: path, Op: OpWrite, Watch: 2}, asWritten, "nothing; wake +1s"),
			event(0, Event{Name: path, Op: OpClose, Watch: 2}, asWritten, "resolve"),
			resolved(0, resolution(written), false, nil, "read write"),
			read(0, stamped(withWriters(whole(ReasonWrite, written, 8), WritersNone), 50), "forward read; prune; nothing"),
			event(time.Second, Event{Name: path, Op: OpWrite, Watch: 2}, facts(written, 9), "nothing; wake +1s"),
			event(time.Second, Event{Name: path, Op: OpClose, Watch: 2}, facts(written, 9), "stamp, take queue"),
			queue(time.Second, Queue{Stamp: 51}, "read write, counted, first"),
			read(time.Second, stamped(whole(ReasonWrite, written, 9), 52), "resolve"),
			resolved(time.Second, resolution(written), false, nil, "stamp, take queue"),
			queue(time.Second, Queue{Stamp: 52}, "read write, counted"),
			read(time.Second, stamped(whole(ReasonWrite, written, 10), 53), "prune; nothing; wake +1s"),
			event(time.Second+time.Millisecond, Event{Name: path, Op: OpClose, Watch: 2}, facts(written, 11), "stamp, take queue"),
			queue(time.Second+time.Millisecond, Queue{Stamp: 54}, "read write, counted, first"),
			read(time.Second+time.Millisecond, stamped(whole(ReasonWrite, written, 11), 54), "forward read; resolve"),
		}},
		{"someone the count says holds the file has written nothing at two reads a pause apart: a reader, most likely; the kernel is asked", false, counting, []step{
			event(0, Event{Name: path, Op: OpWrite, Watch: 2}, asWritten, "nothing; wake +1s"),
			event(0, Event{Name: path, Op: OpClose, Watch: 2}, asWritten, "resolve"),
			resolved(0, resolution(written), false, nil, "read write"),
			read(0, stamped(withWriters(whole(ReasonWrite, written, 8), WritersNone), 50), "forward read; prune; nothing"),
			event(time.Second, Event{Name: path, Op: OpWrite, Watch: 2}, facts(written, 9), "nothing; wake +1s"),
			event(time.Second, Event{Name: path, Op: OpClose, Watch: 2}, facts(written, 9), "stamp, take queue"),
			queue(time.Second, Queue{Queued: []Event{{Name: path, Op: OpOpen, Watch: 2}}, Stamp: 51}, "read write, counted, first"),
			read(time.Second, stamped(whole(ReasonWrite, written, 9), 51), "resolve"),
			resolved(time.Second, resolution(written), false, nil, "stamp, take queue"),
			queue(time.Second, Queue{Stamp: 51}, "read write, counted"),
			read(time.Second, stamped(whole(ReasonWrite, written, 9), 51), "prune; nothing; wake +25ms"),
			// A writer about to write would have by now; still so, it is
			// most likely a reader, and the next read asks the kernel.
			timer(time.Second+25*time.Millisecond, "resolve"),
			resolved(time.Second+25*time.Millisecond, resolution(written), false, nil, "stamp, take queue"),
			queue(time.Second+25*time.Millisecond, Queue{Stamp: 51}, "read write, counted"),
			read(time.Second+25*time.Millisecond, stamped(whole(ReasonWrite, written, 9), 51), "prune; nothing; wake +25ms"),
			timer(time.Second+50*time.Millisecond, "resolve"),
			resolved(time.Second+50*time.Millisecond, resolution(written), false, nil, "read write"),
			read(time.Second+50*time.Millisecond, stamped(withWriters(whole(ReasonWrite, written, 9), WritersNone), 51), "forward read; prune; nothing"),
		}},
		{"someone the count says holds the file writes within the pause: awaited as a writer heard writing, its close reads, counted", false, counting, []step{
			event(0, Event{Name: path, Op: OpWrite, Watch: 2}, asWritten, "nothing; wake +1s"),
			event(0, Event{Name: path, Op: OpClose, Watch: 2}, asWritten, "resolve"),
			resolved(0, resolution(written), false, nil, "read write"),
			read(0, stamped(withWriters(whole(ReasonWrite, written, 8), WritersNone), 50), "forward read; prune; nothing"),
			event(time.Second, Event{Name: path, Op: OpWrite, Watch: 2}, facts(written, 9), "nothing; wake +1s"),
			event(time.Second, Event{Name: path, Op: OpClose, Watch: 2}, facts(written, 9), "stamp, take queue"),
			queue(time.Second, Queue{Queued: []Event{{Name: path, Op: OpOpen, Watch: 2}}, Stamp: 51}, "read write, counted, first"),
			read(time.Second, stamped(whole(ReasonWrite, written, 9), 51), "resolve"),
			resolved(time.Second, resolution(written), false, nil, "stamp, take queue"),
			queue(time.Second, Queue{Stamp: 51}, "read write, counted"),
			read(time.Second, stamped(whole(ReasonWrite, written, 9), 51), "prune; nothing; wake +25ms"),
			event(time.Second+time.Millisecond, Event{Name: path, Op: OpWrite, Watch: 2}, facts(written, 10), "nothing; wake +1s"),
			event(time.Second+2*time.Millisecond, Event{Name: path, Op: OpClose, Watch: 2}, facts(written, 11), "stamp, take queue"),
			queue(time.Second+2*time.Millisecond, Queue{Stamp: 52}, "read write, counted, first"),
			read(time.Second+2*time.Millisecond, stamped(whole(ReasonWrite, written, 11), 52), "forward read; resolve"),
			resolved(time.Second+2*time.Millisecond, resolution(written), false, nil, "prune; nothing"),
		}},
		{"the queue taken before a counted read tells of a writer at work: no read, its close reads", false, counting, []step{
			event(0, Event{Name: path, Op: OpWrite, Watch: 2}, asWritten, "nothing; wake +1s"),
			event(0, Event{Name: path, Op: OpClose, Watch: 2}, asWritten, "resolve"),
			resolved(0, resolution(written), false, nil, "read write"),
			read(0, stamped(withWriters(whole(ReasonWrite, written, 8), WritersNone), 50), "forward read; prune; nothing"),
			event(time.Second, Event{Name: path, Op: OpWrite, Watch: 2}, facts(written, 9), "nothing; wake +1s"),
			event(time.Second, Event{Name: path, Op: OpClose, Watch: 2}, facts(written, 9), "stamp, take queue"),
			queue(time.Second, Queue{Queued: []Event{{Name: path, Op: OpOpen, Watch: 2}, {Name: path, Op: OpWrite, Watch: 2}}, QueuedFacts: facts(written, 9), Stamp: 51}, "resolve; wake +1s"),
			resolved(time.Second, resolution(written), false, nil, "prune; nothing; wake +1s"),
		}},
		{"where no close is told (fsnotify), a file its writer emptied and holds open is asked of again a window later, not held for ten seconds: its close, which nothing tells, ends the wait at the next read", false, Caps{}, []step{
			event(0, Event{Name: path, Op: OpWrite}, facts(emptied, 8), "nothing; wake +100ms"),
			timer(100*time.Millisecond, "resolve"),
			resolved(100*time.Millisecond, resolution(emptied), false, nil, "read write"),
			read(100*time.Millisecond, withWriters(whole(ReasonWrite, emptied, 8), WritersOpen), "prune; nothing; wake +100ms"),
			// Still held: asked again, a window on.
			timer(200*time.Millisecond, "resolve"),
			resolved(200*time.Millisecond, resolution(emptied), false, emptied, "read write"),
			read(200*time.Millisecond, withWriters(whole(ReasonWrite, emptied, 8), WritersOpen), "prune; nothing; wake +100ms"),
			// Closed, empty: confirmed for a window, then handed on.
			timer(300*time.Millisecond, "resolve"),
			resolved(300*time.Millisecond, resolution(emptied), false, emptied, "read write"),
			read(300*time.Millisecond, withWriters(whole(ReasonWrite, emptied, 8), WritersNone), "prune; nothing; wake +100ms"),
			timer(400*time.Millisecond, "resolve"),
			resolved(400*time.Millisecond, resolution(emptied), false, nil, "read write"),
			read(400*time.Millisecond, withWriters(whole(ReasonWrite, emptied, 8), WritersNone), "forward read; prune; nothing"),
		}},
		{"where no close is told (fsnotify), a file its writer holds open and empty for good is handed on MaxWriterWait after the write that emptied it, as where closes are told", false, Caps{}, []step{
			event(0, Event{Name: path, Op: OpWrite}, facts(emptied, 8), "nothing; wake +100ms"),
			timer(100*time.Millisecond, "resolve"),
			resolved(100*time.Millisecond, resolution(emptied), false, nil, "read write"),
			read(100*time.Millisecond, withWriters(whole(ReasonWrite, emptied, 8), WritersOpen), "prune; nothing; wake +100ms"),
			// The reads a window apart, each finding it so, keep the
			// wait's start: the last before the bound.
			timer(9950*time.Millisecond, "resolve"),
			resolved(9950*time.Millisecond, resolution(emptied), false, emptied, "read write"),
			read(9950*time.Millisecond, withWriters(whole(ReasonWrite, emptied, 8), WritersOpen), "prune; nothing; wake +50ms"),
			timer(10*time.Second, "resolve"),
			resolved(10*time.Second, resolution(emptied), false, emptied, "read write"),
			read(10*time.Second, withWriters(whole(ReasonWrite, emptied, 8), WritersOpen), "take queue after truncation"),
			queue(10*time.Second, Queue{QueuedFacts: facts(emptied, 8), LateFacts: facts(emptied, 8)}, "forward read; prune; nothing"),
		}},
		{"a watched directory that vanished as it was watched again, its deletion untold (fsnotify drops it once the parent is watched): its old watch is forgotten, and the directory made again is watched", false, Caps{}, []step{
			// Every watch added again (events were lost): the directory is
			// there, its file gone; by its Add, the directory is gone too.
			event(0, Event{Op: OpRescan}, Facts{}, "resolve from root"),
			resolved(0, noFile, false, nil, "read event"),
			read(0, Read{Why: ReasonEvent, Err: fs.ErrNotExist, Missing: true}, "add /etc/app (self|names|content); wake +100ms"),
			added(0, 0, fs.ErrNotExist, ErrVanished, "dropped /etc/app; resolve from root; wake +100ms"),
			resolved(0, dirGone, false, nil, "add /etc (self|names|content); wake +100ms"),
			// Made again, its file in it, before the parent's watch came.
			added(0, 3, nil, 0, "resolve from root; wake +100ms"),
			resolved(0, resolution(moved), false, nil, "add /etc/app (self|names|content); wake +100ms"),
			added(0, 4, nil, 0, "resolve from root; wake +100ms"),
			resolved(0, resolution(moved), false, nil, "remove /etc; prune; resolve from root; wake +100ms"),
			resolved(0, resolution(moved), false, nil, "read event; wake +100ms"),
		}},
		{"a counted read that finds another file than the one counted: set aside, and read again asking the kernel", false, counting, []step{
			event(0, Event{Name: path, Op: OpWrite, Watch: 2}, asWritten, "nothing; wake +1s"),
			event(0, Event{Name: path, Op: OpClose, Watch: 2}, asWritten, "resolve"),
			resolved(0, resolution(written), false, nil, "read write"),
			read(0, stamped(withWriters(whole(ReasonWrite, written, 8), WritersNone), 50), "forward read; prune; nothing"),
			event(time.Second, Event{Name: path, Op: OpWrite, Watch: 2}, facts(written, 9), "nothing; wake +1s"),
			event(time.Second, Event{Name: path, Op: OpClose, Watch: 2}, facts(written, 9), "stamp, take queue"),
			queue(time.Second, Queue{Stamp: 51}, "read write, counted, first"),
			read(time.Second, stamped(whole(ReasonWrite, fakeFile{ino: 11, size: 5, mtime: t0}, 9), 51), "resolve"),
			resolved(time.Second, resolution(fakeFile{ino: 11, size: 5, mtime: t0}), false, nil, "read write"),
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := testDecider(c.caps)
			if c.afresh {
				d = New(config(c.caps))
			}
			for i, s := range c.steps {
				now := t0.Add(s.at)
				assert.Equal(t, s.want, summary(s.in(d, now), now), "step %d", i)
			}
		})
	}
}

// A loop that polls: what it reads is judged without a queue, and it
// watches nothing.
func TestDecisionsOfALoopThatPolls(t *testing.T) {
	cfg := config(Caps{})
	cfg.Events = false
	d := New(cfg)
	now := t0
	assert.Equal(t, "forward read; nothing", summary(d.Start(whole(ReasonStart, readFile, 7), now), now))
	assert.Equal(t, "unchanged; nothing", summary(d.Look(ReasonRecheck, false, 7, now), now))
	assert.Equal(t, "nothing; wake +100ms", summary(d.Look(ReasonRecheck, false, 8, now), now), "a change: a quiet window first")
	now = now.Add(100 * time.Millisecond)
	assert.Equal(t, "read recheck", summary(d.Timer(now), now))
	assert.Equal(t, "forward read; nothing", summary(d.Read(whole(ReasonRecheck, fakeFile{ino: 10, size: 5}, 8), now), now))
}

// An input the decider does not await is the loop's bug: it panics.
func TestAnInputOutOfTurnPanics(t *testing.T) {
	d := testDecider(linux)
	assert.Panics(t, func() { d.Read(whole(ReasonEvent, readFile, 7), t0) })
	assert.Panics(t, func() { d.Added(AddResult{}, t0) })
}

// withSearched is r, having looked names up in dirs on its way.
func withSearched(r Resolution, dirs ...string) Resolution {
	r.Searched = dirs
	return r
}

// Events takes events queued together up to the first that asks for
// something to be done, and says how many it took: the loop hands the
// rest in once that is done, so that each is judged as if taken alone.
func TestEventsAreTakenTogetherUpToTheFirstThatAsks(t *testing.T) {
	old := "/etc/app/..2026_old/config.yaml"
	for _, c := range []struct {
		name string
		evs  []Event
		took int
		want string
	}{
		{"events that ask for nothing: all of them, one decision", []Event{
			{Name: old, Op: OpAttrib}, {Name: old, Op: OpRemove}, {Name: "/etc/app/other.yaml", Op: OpCreate},
		}, 3, "nothing"},
		{"a writer's close asks for a read: what follows it waits for the read", []Event{
			{Name: path, Op: OpWrite, Watch: 2}, {Name: path, Op: OpClose, Watch: 2}, {Name: path, Op: OpWrite, Watch: 2},
		}, 2, "resolve"},
		{"a file's own watch dropped: the loop forgets it first", []Event{
			{Name: path, Op: OpRemove | OpGone, Watch: 2}, {Name: old, Op: OpRemove},
		}, 1, "dropped /etc/app/config.yaml; nothing; wake +100ms"},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := testDecider(linux)
			dec, n := d.Events(c.evs, facts(fakeFile{ino: 10, size: 5, mtime: t0}, 8), t0)
			assert.Equal(t, c.took, n)
			assert.Equal(t, c.want, summary(dec, t0))
		})
	}
}

// Each phase takes what it awaits (awaits), and Step panics at any other
// input: the loop's bug. docs/internals.md shows the table as it is.
func TestStepTakesWhatEachPhaseAwaits(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "internals.md"))
	require.NoError(t, err)
	for p := idle; int(p) < len(awaits); p++ {
		cells := make([]string, len(inputKindNames))
		for k := range InputKind(len(inputKindNames)) {
			cells[k] = "—"
			if takes(p, k) {
				cells[k] = "✓"
				continue
			}
			assert.PanicsWithValue(t, "decide: input "+k.String()+" while "+p.String(), func() {
				d := testDecider(linux)
				d.phase = p
				d.Step(Input{Kind: k, Now: t0})
			}, "%s takes no %s", p, k)
		}
		line := "| " + p.String() + " | " + strings.Join(cells, " | ") + " |"
		assert.True(t, strings.Contains(string(doc), line+"\n"), "docs/internals.md lacks the row for %s:\n%s", p, line)
	}
}

// Planning the watches is done a few times an update (after each read, at
// each round of watching the path): once its buffer has grown, it
// allocates nothing (12 allocations a kubelet update, before).
func TestPlanningTheWatchesAllocatesNothing(t *testing.T) {
	d := testDecider(linux)
	r := withSearched(resolution(readFile), "/", "/etc", dir)
	d.watches.plan(&r)
	allocs := testing.AllocsPerRun(100, func() { d.watches.plan(&r) })
	assert.Zero(t, allocs)
}
