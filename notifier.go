package file

// op is what happened, as far as a watch session cares. An event is only a
// hint to look again, never a description of the change: the session
// re-resolves and re-reads, and judges by content.
type op uint8

const (
	opCreate op = 1 << iota // an entry appeared: created, moved in, linked
	opRemove                // an entry went: deleted, moved away
	opWrite                 // the file was written in place
	opAttrib                // metadata changed: mode, times, owner
	opLost                  // events were dropped: look at everything again
)

// event is what a notifier tells a session: op happened to name. An opLost
// event names nothing.
type event struct {
	name string
	op   op
}

func (e event) has(o op) bool { return e.op&o != 0 }

// notifier is a watch session's source of filesystem events. It is the
// seam through which tests inject every failure the real one can have: a
// constructor or Add that fails, an error or overflow on Errors, a channel
// that closes. The shared watcher's subscriptions are the real one.
//
// A session drains Events and Errors until it calls Close. An error on
// Errors means the notifier broke: the session ends, and is re-armed with a
// full re-read.
type notifier interface {
	// Add watches the directory dir: events on dir itself and on each of
	// its entries that is wanted.
	Add(dir string) error
	// Remove stops watching dir.
	Remove(dir string)
	// Want asks for the events that name path. The session wants each path
	// before it looks it up, so that no change to it can fall between the
	// look and the wish.
	Want(path string)
	// Forget drops the wanted paths that are not in keep.
	Forget(keep map[string]bool)
	Events() <-chan event
	Errors() <-chan error
	Close() error
}
