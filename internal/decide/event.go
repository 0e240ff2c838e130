package decide

import "strings"

// Op is what happened, as far as a watch cares. An event is only a hint to
// look again, never a description of the change: the loop resolves the
// path and reads the file again, and the file is judged by its content.
type Op uint16

const (
	OpCreate       Op = 1 << iota // an entry appeared: created, moved in, linked
	OpRemove                      // an entry went (deleted, moved away), or the watched inode itself did
	OpWrite                       // the file was written in place
	OpClose                       // a writer closed the file: its writes are done
	OpAttrib                      // metadata changed: mode, times, owner, link count
	OpRescan                      // events were lost, or something changed that no event reports (a mount): look at everything again
	OpDropped                     // the kernel dropped the watch; backends only: the loop is told OpRemove|OpGone
	OpMade                        // with OpCreate: the entry was created there, not moved in, so that its creator may still be writing it; only where closes are reported
	OpGone                        // with OpRemove, on a watch of the inode itself: the inode is gone for good (deleted, or its filesystem unmounted), not moved
	OpOpen                        // on a file's own watch (WatchOpens): a process opened the file, to read or to write
	OpCloseNoWrite                // on a file's own watch (WatchOpens): a process that opened the file only to read it closed it
)

var opNames = [...]string{"create", "remove", "write", "close", "attrib", "rescan", "dropped", "made", "gone", "open", "close-nowrite"}

// String names an op's bits, joined by |.
func (o Op) String() string {
	var names []string
	for i, name := range opNames {
		if o&(1<<i) != 0 {
			names = append(names, name)
		}
	}
	return strings.Join(names, "|")
}

// Event is what a notifier tells the loop: Op happened to Name. An
// OpRescan event names nothing.
type Event struct {
	Name string
	Op   Op
	// Watch is the id of the watch the event came on, when it is about the
	// watched file or directory itself rather than one of its entries
	// (zero otherwise). A watch is of one inode, for as long as the inode
	// lives: its events are that file's, whatever name the path shows now,
	// even where a new file was given the inode number of one deleted
	// (which no stat can tell apart).
	Watch int
}

// Has reports whether the event has any of the bits of o.
func (e Event) Has(o Op) bool { return e.Op&o != 0 }

// Caps is what a notifier can see.
type Caps struct {
	// Closes: it reports a writer closing a file it wrote, so that an
	// in-place write is read when it is done, not after a quiet window; and
	// it tells a file created where the path leads from one moved there.
	Closes bool
	// Ancestors: watches are cheap enough to watch every directory the
	// path goes through, not only those that hold a symlink or the file.
	Ancestors bool
	// Files: it can watch a file's own inode, which sees writes made
	// through any of its names.
	Files bool
	// Opens: a file's own watch can report every open of the file and
	// every close of a reader (WatchOpens), so that, with its writers'
	// closes, it tells who holds the file open.
	Opens bool
}

// WatchedInode is what a notifier can say of the inode a watch is of: its
// device and number while the watch lasts; Gone once the kernel dropped the
// watch, its inode deleted or its filesystem unmounted.
type WatchedInode struct {
	Dev, Ino uint64
	Gone     bool
}

// WatchKind is what a watch is asked to report, a set of these bits: the
// least each path needs, so that what happens to other names where the
// path goes (a log appended to beside the config, files made and removed
// in /tmp) wakes nothing.
type WatchKind uint8

const (
	// WatchSelf: the watched file or directory itself moved or deleted.
	WatchSelf WatchKind = 1 << iota
	// WatchNames: a directory's entries created, removed, or moved in or
	// out: what can change where the path leads.
	WatchNames
	// WatchContent: writes, writers' closes and changes of attributes, of
	// the watched file itself, or of a directory's entries.
	WatchContent
	// WatchCloses: the closes of a directory's entries' writers, and
	// nothing else of their content.
	WatchCloses
	// WatchOpens: the watched file's opens, and its readers' closes:
	// with its writers' closes (WatchContent), who holds it open.
	WatchOpens
)

// Kinds a path is watched with.
const (
	watchAncestor = WatchSelf                             // a plain directory on the way: only its own move tells
	watchDir      = WatchSelf | WatchNames                // a directory whose entries the path depends on
	watchDirFiles = WatchSelf | WatchNames | WatchContent // and whose files are not watched by themselves
	watchFile     = WatchSelf | WatchContent              // the file itself (and its opens, where the notifier reports them)
)

var watchKindNames = [...]string{"self", "names", "content", "closes", "opens"}

// String names a kind's bits, joined by |.
func (k WatchKind) String() string {
	var names []string
	for i, name := range watchKindNames {
		if k&(1<<i) != 0 {
			names = append(names, name)
		}
	}
	return strings.Join(names, "|")
}
