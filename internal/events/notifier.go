package events

import (
	"errors"

	"github.com/keepwatch/file/internal/decide"
)

// Notifier is a watch loop's source of filesystem events. It is the seam
// through which tests inject every failure the real one can have: a
// constructor or Add that fails, an error on Errors, a channel that closes.
// The shared watcher's subscriptions (Hub.Subscribe) are the real one.
//
// A loop drains Events and Errors until it calls Close. An error on Errors
// means the notifier broke: the loop ends, and is re-armed with a full
// re-read; so does a channel that closes (ErrEventsClosed,
// ErrErrorsClosed).
type Notifier interface {
	// Add watches path, a directory or a file, not following a symlink,
	// for what report asks (at least: a backend that cannot choose reports
	// all of it): events on path itself and, for a directory, on each of
	// its entries that is wanted. Adding a path again watches what it names
	// now. It returns the watch's id, which the events on path itself
	// carry.
	Add(path string, report decide.WatchKind) (int, error)
	// Remove stops watching path.
	Remove(path string)
	// Want asks for the events that name path; a path ending in a
	// separator asks for those of every entry of the directory. The loop
	// wants each path before it looks it up, so that no change to it can
	// fall between the look and the wish.
	Want(path string)
	// WantOnly drops the wanted paths that are not in keep.
	WantOnly(keep map[string]bool)
	// Sync returns once every event the kernel queued before it was called
	// is in Events (or dropped for an OpRescan there), so that a loop can
	// tell what happened before a moment it read the file.
	Sync()
	// Caps says what the notifier can see.
	Caps() decide.Caps
	// Inode says which inode the watch id is of, or that the kernel
	// dropped it, and reports whether it can tell: see Backend.Inode.
	Inode(id int) (decide.WatchedInode, bool)
	Events() <-chan decide.Event
	Errors() <-chan error
	Close() error
}

// Causes that end a loop: a channel of its notifier closed, or one of
// fsnotify's that a backend reads.
var (
	ErrEventsClosed = errors.New("keepwatch: event channel closed")
	ErrErrorsClosed = errors.New("keepwatch: error channel closed")
)

// None is the notifier of a loop that polls: it watches nothing and
// never has an event, so the loop is woken by its timers alone.
type None struct{}

func (None) Add(string, decide.WatchKind) (int, error) { return 0, nil }
func (None) Remove(string)                             {}
func (None) Want(string)                               {}
func (None) WantOnly(map[string]bool)                  {}
func (None) Sync()                                     {}
func (None) Caps() decide.Caps                         { return decide.Caps{} }
func (None) Inode(int) (decide.WatchedInode, bool)     { return decide.WatchedInode{}, false }
func (None) Events() <-chan decide.Event               { return nil }
func (None) Errors() <-chan error                      { return nil }
func (None) Close() error                              { return nil }

// Belled is a notifier whose loop may wait on a Bell rather than on its
// channels: the hub's subscriptions on Linux. A loop that does looks at
// its channels whenever the bell rings, and when its deadline comes.
type Belled interface {
	// Bell is what the notifier rings once it has put events or an error
	// in its channels; nil if it has none.
	Bell() *Bell
}
