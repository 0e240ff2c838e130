package file

// op is what happened, as far as a watch session cares. An event is only a
// hint to look again, never a description of the change: the session
// re-resolves and re-reads, and judges by content.
type op uint16

const (
	opCreate  op = 1 << iota // an entry appeared: created, moved in, linked
	opRemove                 // an entry went (deleted, moved away), or the watched inode itself did
	opWrite                  // the file was written in place
	opClose                  // a writer closed the file: its writes are done
	opAttrib                 // metadata changed: mode, times, owner, link count
	opRescan                 // events were lost, or something changed that no event reports (a mount): look at everything again
	opDropped                // the kernel dropped the watch; backends only, the hub tells sessions opRemove
	opMade                   // with opCreate: the entry was created there, not moved in, so its creator may still be writing it; only where closes are reported
	opGone                   // with opRemove, on a watch of the inode itself: the inode is gone for good (deleted, or its filesystem unmounted), not moved
)

// event is what a notifier tells a session: op happened to name. An
// opRescan event names nothing.
type event struct {
	name string
	op   op
	// watch is the watch the event came on, when it is about the watched
	// file or directory itself rather than one of its entries: the id
	// Add returned for it (zero otherwise). A watch is of one inode, for
	// as long as the inode lives: its events are that file's, whatever
	// name the path shows now, even where a new file is given the inode
	// number of one deleted (which a stat could not tell apart).
	watch int
}

func (e event) has(o op) bool { return e.op&o != 0 }

// notifier is a watch session's source of filesystem events. It is the
// seam through which tests inject every failure the real one can have: a
// constructor or Add that fails, an error on Errors, a channel that closes.
// The shared watcher's subscriptions are the real one.
//
// A session drains Events and Errors until it calls Close. An error on
// Errors means the notifier broke: the session ends, and is re-armed with a
// full re-read.
type notifier interface {
	// Add watches path, a directory or a file, not following a symlink:
	// events on path itself and, for a directory, on each of its entries
	// that is wanted. Adding a path again watches what it names now. It
	// returns the watch's id, which the events on path itself carry.
	Add(path string) (int, error)
	// Remove stops watching path.
	Remove(path string)
	// Want asks for the events that name path; a path ending in a
	// separator asks for those of every entry of the directory. The session
	// wants each path before it looks it up, so that no change to it can
	// fall between the look and the wish.
	Want(path string)
	// Forget drops the wanted paths that are not in keep.
	Forget(keep map[string]bool)
	// Sync returns once every event the kernel queued before it was called
	// is in Events (or dropped for an opRescan there), so that a session
	// can tell what happened before a moment it read the file.
	Sync()
	// Caps says what the notifier can see.
	Caps() caps
	// Inode says which inode the watch id is of, or that the kernel
	// dropped it, and reports whether it can tell: see backend.Inode.
	Inode(id int) (watchedInode, bool)
	Events() <-chan event
	Errors() <-chan error
	Close() error
}

// caps is what a notifier, and the backend behind it, can see.
type caps struct {
	// closes: it reports a writer closing a file it wrote, so that an
	// in-place write is read when it is done, not after a quiet window.
	closes bool
	// ancestors: watches are cheap enough to watch every directory the
	// path goes through, not only those that hold a symlink or the file.
	ancestors bool
	// files: it can watch a file's own inode, which sees writes made
	// through any of its names.
	files bool
}

// noEvents is the notifier of a session that polls: it watches nothing and
// never has an event, so the session's loop is woken by its timers alone.
type noEvents struct{}

func (noEvents) Add(string) (int, error)        { return 0, nil }
func (noEvents) Remove(string)                  {}
func (noEvents) Want(string)                    {}
func (noEvents) Forget(map[string]bool)         {}
func (noEvents) Sync()                          {}
func (noEvents) Caps() caps                     { return caps{} }
func (noEvents) Inode(int) (watchedInode, bool) { return watchedInode{}, false }
func (noEvents) Events() <-chan event           { return nil }
func (noEvents) Errors() <-chan error           { return nil }
func (noEvents) Close() error                   { return nil }
