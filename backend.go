package file

import "github.com/keepwatch/file/internal/decide"

// backend is the kernel side of the shared watcher: inotify on Linux
// (backend_linux.go), fsnotify elsewhere (backend_fsnotify.go). The hub
// multiplexes it among the notifiers of every watch loop.
//
// A backend's goroutines read the kernel and hand what they read to the
// handler it was made with, directly: a hand-off to another goroutine would
// cost tens of microseconds on every event. The Linux backend has two (the
// inotify instance, the mount table); the handler serializes them.
type backend interface {
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

// handler takes what a backend reads, on the backend's goroutines. Neither
// method may block.
type handler interface {
	// events takes a batch of events, in the kernel's order, and reports
	// whether it handed any on (a loop has work). It keeps none of the
	// batch, which the backend may reuse, nor any event's name, whose
	// bytes may be the backend's read buffer: a name handed on is a
	// string made anew.
	events(batch []rawEvent) bool
	// failed takes the error that broke the backend; nothing follows it.
	failed(err error)
}

// rawEvent is what a backend reports: op happened to the entry name of the
// watched directory id, or, with no name, to the watched inode itself. An
// event for everyWatch is an OpRescan: of every watch when its name is
// empty (events were lost), of the watches of the paths through the mount
// point it names otherwise (the mount table changed there).
type rawEvent struct {
	id   int
	name string
	op   decide.Op
}

// everyWatch is the id of an event about more than one watch.
const everyWatch = -1
