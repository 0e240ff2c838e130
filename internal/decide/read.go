package decide

import (
	"io/fs"
	"time"
)

// Reason says why the file was read: what made the watch look at it. It
// is a name for string, and its values below are the ones the root
// package's Reason (told in Stats and the log) takes, defined here once.
type Reason = string

// The reasons a file is read for.
const (
	ReasonStart   Reason = "start"   // the watch began
	ReasonRestart Reason = "restart" // the watch was re-armed after a failure
	ReasonEvent   Reason = "event"   // a filesystem event on the path's chain
	ReasonWrite   Reason = "write"   // in-place writes ended
	ReasonRecheck Reason = "recheck" // the periodic re-check, or a poll, saw a change
	ReasonRequest Reason = "request" // the application asked, with Recheck
)

// Read is what one read of the subject found, as the loop tells it: the
// facts a decision on it needs, not its content.
type Read struct {
	Why     Reason
	Err     error       // why it failed; nil if it read
	Missing bool        // it failed for want of the file: something on the path is not there
	Process bool        // it failed for a reason of the process, not of the file (too many open files, no memory)
	Empty   bool        // it read fine and found nothing: an empty file, a set with no files
	Size    int64       // how many bytes it read
	Torn    bool        // the file was cut short as it was read: a writer's truncation
	Info    fs.FileInfo // the file's own stat, as read (fstat); nil for a set, or if it failed
	Sig     Signature   // the stat it was read at, for the cheap re-check; zero if it failed
	ModTime time.Time   // when the file was last written; a set's newest file's
	// Volume says it was read from a kubelet volume's payload, through its
	// ..data link; Swapped is when that link was made (zero if not known).
	// Kubelet writes a payload whole, then swaps it in: a write after that
	// is someone editing it in place.
	Volume  bool
	Swapped time.Time
	// Writers is what the kernel said of those who hold the file open for
	// writing, where the read asked (Action.Ask): asked before the read,
	// and none only if none held it then and none changed it as it was read
	// (the stamps taken as it was opened and once it was read are alike,
	// where the filesystem's change times tell every change; elsewhere the
	// lease was held through the read). WritersUnknown where it was not
	// asked, or does not say.
	Writers Writers
	// Stamp is the file's stamp once it was read; FineTimes says that its
	// filesystem gives every change made after a stat a change time of its
	// own, so that a stamp taken before the read and alike says nothing
	// changed the file in between.
	Stamp     Stamp
	FineTimes bool
}

// Writers is what the kernel says of a file's writers: whether anyone
// holds it open for writing. A read lease is refused while anyone does,
// and the loop asks for one before a read and lets it go right after (at
// once, for a file whose own watch was just added); where leases are not
// to be had (not the file's owner, without CAP_LEASE; leases off; a
// filesystem or platform without them), it does not say.
type Writers uint8

const (
	WritersUnknown Writers = iota // the kernel does not say
	WritersNone                   // no one holds the file open for writing
	WritersOpen                   // someone does: a writer at work, or holding it open
)

var writersNames = [...]string{"unknown", "none", "open"}

func (w Writers) String() string { return writersNames[w] }

// doubtful reports whether the read is more likely the middle of an update
// than its end: a missing or empty file, an empty set.
func (r *Read) doubtful() bool { return r.Missing || r.Err == nil && r.Empty }

// writtenWithin reports whether the file read was written so lately, at
// now, that a writer may still be at it: within the last d and, in a
// kubelet volume, after its payload was swapped in. A file found complete,
// its writer long gone, as a symlink retargeted to a release deployed
// before, is read at once; so is one edited in place long ago, which a
// wait would find no older each time it ends.
func (r *Read) writtenWithin(d time.Duration, now time.Time) bool {
	if age := now.Sub(r.ModTime); age >= d || age <= -d {
		return false
	}
	if r.Volume {
		return !r.Swapped.IsZero() && r.ModTime.After(r.Swapped)
	}
	return true
}

// Signature sums up stats: alike stats, alike signatures; zero is no stat.
type Signature uint64

// Stamp sums up what a change to a file changes of its stat: its
// identity, size, and modification and change times; zero is no stamp.
// Where the filesystem gives every change made after a stat a change time
// of its own (Read.FineTimes), two stamps alike, the second taken after the
// first, say that nothing changed the file between them.
type Stamp uint64
