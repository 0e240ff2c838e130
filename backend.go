package file

// backend is the kernel side of the shared watcher: inotify on Linux
// (backend_linux.go), fsnotify elsewhere (backend_fsnotify.go). The hub
// multiplexes it among the notifiers of every session.
type backend interface {
	// Add watches path, a directory or a file, not following a symlink,
	// and returns the watch's id. The kernel keeps one watch per inode, so
	// every path to one directory gets the same id.
	Add(path string) (id int, err error)
	// Remove drops a watch. It cannot fail in a way that matters: an error
	// only says the kernel already dropped it.
	Remove(id int)
	// Events delivers what the kernel reports, a batch at a time.
	Events() <-chan []rawEvent
	// Errors delivers the error that broke the backend; nothing follows.
	Errors() <-chan error
	// Caps says what the backend can see.
	Caps() caps
	// Close stops the backend and waits for its goroutine. It is idempotent.
	Close() error
}

// rawEvent is what a backend reports: op happened to the entry name of the
// watched directory id, or, with no name, to the watched inode itself. An
// event for everyWatch concerns every watch.
type rawEvent struct {
	id   int
	name string
	op   op
}

// everyWatch is the id of an event about every watch: events were lost,
// or the mount table changed.
const everyWatch = -1
