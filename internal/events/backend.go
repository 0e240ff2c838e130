package events

import "github.com/keepwatch/file/internal/decide"

// Backend is the kernel side of the shared watcher: inotify on Linux
// (backend_linux.go), fsnotify elsewhere (backend_fsnotify.go). The hub
// multiplexes it among the notifiers of every watch loop.
//
// A backend's goroutines read the kernel and hand what they read to the
// handler it was made with, directly: a hand-off to another goroutine would
// cost tens of microseconds on every event. The Linux backend has two (the
// inotify instance, the mount table); the handler serializes them.
type Backend interface {
	// Add watches path, a directory or a file, not following a symlink,
	// for what report asks at least, and returns the watch's id. The kernel
	// keeps one watch per inode, so every path to one directory gets the
	// same id, and its watch reports what any of them asked for.
	Add(path string, report decide.WatchKind) (id int, err error)
	// Remove drops a watch. It cannot fail in a way that matters: an error
	// only says the kernel already dropped it.
	Remove(id int)
	// Sync returns once every event the kernel queued before it was called
	// has been handed to the handler. A backend that reports no closes
	// need not know: nothing waits on it there.
	Sync()
	// Caps says what the backend can see.
	Caps() decide.Caps
	// Inode says which inode the watch id is of, whatever the path it was
	// added by shows now, or that the kernel dropped it, and reports
	// whether the backend can tell.
	Inode(id int) (decide.WatchedInode, bool)
	// Close stops the backend's goroutines, waits for them and releases
	// the kernel's resources. It is idempotent. It must not be called from
	// the handler, which runs on them.
	Close() error
}

// Handler takes what a backend reads, on the backend's goroutines. Neither
// method may block.
type Handler interface {
	// Events takes a batch of events, in the kernel's order, and reports
	// whether it handed any to a loop that waits on its channel, which the
	// send readied (a loop on a bell is readied by the runtime's poller,
	// once the reader parks). It keeps none of the
	// batch, which the backend may reuse, nor any event's name, whose
	// bytes may be the backend's read buffer: a name handed on is a
	// string made anew.
	Events(batch []RawEvent) bool
	// Failed takes the error that broke the backend; nothing follows it.
	Failed(err error)
}

// RawEvent is what a backend reports: Op happened to the entry Name of the
// watched directory ID, or, with no name, to the watched inode itself. An
// event for EveryWatch is an OpRescan: of every watch when its name is
// empty (events were lost), of the watches of the paths through the mount
// point it names otherwise (the mount table changed there).
type RawEvent struct {
	ID   int
	Name string
	Op   decide.Op
}

// EveryWatch is the ID of an event about more than one watch.
const EveryWatch = -1
