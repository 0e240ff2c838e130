package decide

import (
	"io/fs"
	"time"
)

// Decision is what the loop is to do after an input: first its effects,
// in the order of its fields, then its Next action, whose outcome is the
// next input. The slices are the decider's, valid until its next input.
type Decision struct {
	// Forward says what to do with the read just judged: nothing, hand it
	// on, or report it as failing for a reason of the process. It comes
	// first: watches move once it is handed on, off the path to the
	// callback.
	Forward Forward
	// Dropped lists the watches the kernel dropped: the loop removes them
	// from its notifier, which still counts them.
	Dropped []string
	// Unchanged says that a look found the file as the last read left it:
	// the watch is looking.
	Unchanged bool
	// Remove lists the watches the path no longer needs.
	Remove []string
	// Prune says that the path's last resolution is the one to keep:
	// the loop forgets the names it no longer looks up.
	Prune bool
	// DirsChanged says that the directories watched changed: WatchedDirs
	// lists them now.
	DirsChanged bool
	// WakeAt is when the decider is next to be told the time
	// (InputTimer); zero if not.
	WakeAt time.Time
	// Next is the one action whose outcome is the next input; Nothing
	// when the loop may wait for events again.
	Next Action
	// Taken is how many of InputEvents' events the decider took (see
	// Decider.events): the loop hands the rest in once Next is done.
	Taken int
}

// Forward is what becomes of a read the loop made.
type Forward uint8

const (
	ForwardNothing Forward = iota // held, or not a read: nothing goes on
	ForwardRead                   // accepted: it goes on to the callback
	ForwardFailure                // it failed for a reason of the process: told of, and retried
)

// ActionKind is what an Action asks the loop to do.
type ActionKind uint8

const (
	Nothing     ActionKind = iota // wait for events, the timer, a look
	Resolve                       // resolve the path (from the root, or resumed from the names touched): then Resolved
	ReadNow                       // read the subject for Why, through the last resolution if Via: then Read
	TakeQueue                     // take every event the kernel queued by now, and those that come meanwhile: then Queue
	AddWatch                      // watch Path: then Added
	AddOwnWatch                   // watch the file at Path by itself, and lstat it: then OwnWatchAdded
	AskInode                      // ask the notifier which inode the watch Watch is of: then InodeOf
	CheckPath                     // resolve the path again from the first name Touched lists, and say whether it moved, else stat the subject: then InputPathChecked
	Fail                          // end the loop on Err
)

var actionNames = [...]string{"nothing", "resolve", "read", "take queue", "add watch", "add own watch", "ask inode", "check path", "fail"}

func (k ActionKind) String() string { return actionNames[k] }

// Action is the one thing a Decision asks of the loop that has an outcome
// to hand back.
type Action struct {
	Kind ActionKind
	// Resolve: FromRoot resolves from the root; otherwise the resolution
	// is resumed from the first name Touched lists (a map the loop only
	// reads). StatFile asks, once it is made, for the stat of the file the
	// subject's one path leads to. CheckPath: the resolution is made again,
	// apart from the last, from the first name Touched lists.
	FromRoot bool
	Touched  map[string]bool
	StatFile bool
	// ReadNow: why, whether the read goes through the last resolution
	// (its payload, its file) or resolves for itself, and whether it asks
	// the kernel, before it reads, whether anyone holds the file open for
	// writing (a lease, let go at once where the filesystem's change times
	// tell every change; see Read.Writers). Without Ask, the file's own
	// watch has told who holds it open (see openers).
	Why Reason
	Via bool
	Ask bool
	// ReadNow: First says the read is made before the path is resolved
	// again, for events that may have moved it since the last resolution:
	// through the kernel's own walk of the path, and, in a kubelet volume,
	// through ..data as it is now, not as the last resolution found it.
	First bool
	// TakeQueue: first wait out a truncation under way of the subject's
	// files (a read that found nothing: the next writer's O_TRUNC may not
	// have queued its event yet); or first stamp the subject (StampFirst:
	// Queue.Stamp), the queue being taken right before a read, which the
	// stamp is compared with.
	AwaitTruncation bool
	StampFirst      bool
	// AddWatch, AddOwnWatch: the path to watch, and what its watch is to
	// report (AddOwnWatch: a file's writes, closes, attributes and its own
	// end); AddOwnWatch: File is the file it is to be the watch of.
	Path   string
	Report WatchKind
	File   fs.FileInfo
	// AskInode: the watch's id.
	Watch int
	// Fail: why the loop ends.
	Err error
}
