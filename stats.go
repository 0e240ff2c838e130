package file

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"

	"github.com/keepwatch/file/internal/decide"
)

// Mode says how a provider notices changes.
type Mode string

// The modes of [Stats.Mode].
const (
	// ModeStopped: no watch is running.
	ModeStopped Mode = "stopped"
	// ModeEvents: filesystem events, with the periodic re-check as a
	// safety net.
	ModeEvents Mode = "events"
	// ModePolling: re-reading at the re-check interval, because events
	// cannot be had or the filesystem delivers none (see [ErrPolling]).
	ModePolling Mode = "polling"
	// ModeRetrying: the watch broke and waits out its backoff before it is
	// re-armed (see [ErrWatchInterrupted]).
	ModeRetrying Mode = "retrying"
)

// Reason says why the content a callback got was read: what made the watch
// look at the file.
type Reason string

// The reasons of [Stats.LastUpdateReason], also logged with each delivery.
// Their values are the decider's own (internal/decide), so that the two
// can never disagree.
const (
	ReasonStart   = Reason(decide.ReasonStart)   // the watch began
	ReasonRestart = Reason(decide.ReasonRestart) // the watch was re-armed after a failure
	ReasonEvent   = Reason(decide.ReasonEvent)   // a filesystem event on the path's chain
	ReasonWrite   = Reason(decide.ReasonWrite)   // in-place writes ended
	ReasonRecheck = Reason(decide.ReasonRecheck) // the periodic re-check, or a poll, saw a change
	ReasonRequest = Reason(decide.ReasonRequest) // the application asked, with Recheck
)

// Stats is a snapshot of what a provider has done, from [File.Stats]. The
// counters cover the provider's whole life, across Watch calls, so they
// suit monitoring systems that expect counters to only grow.
type Stats struct {
	Path string // the path given to Provider
	Mode Mode   // how changes are noticed now

	Updates  uint64 // callbacks fired with new content
	Restarts uint64 // watches re-armed, or fallen back to polling, after a failure
	Errors   uint64 // problems reported (file or watch): logged, and told to the callback with WithErrorCallbacks

	LastUpdate       time.Time // when the last update was delivered; zero if none
	LastUpdateReason Reason    // why its content was read
	LastError        error     // the last problem reported; nil if none
	LastErrorTime    time.Time // when it was reported

	// LastRead is when the watch last read the file and took what it read:
	// its first read, each delivery, and each read that found what the
	// application already has (after an event that changed nothing, or a
	// re-check that found the file's size or time changed). A re-check
	// that finds them unchanged reads nothing, and does not count. Zero
	// until a watch has read the file. Unlike LastUpdate it is set once a
	// watch starts, so the age of what the application has is
	// time.Since(LastRead) from then on.
	LastRead time.Time

	// LastCheck is when the watch last made sure of the file: a read (as
	// LastRead), or a re-check (or a poll) that found its size and time as
	// the last read left them. It tells a watch that is looking from one
	// that is stuck: with the default re-check, it is never more than about
	// 30 s old on events, a poll interval when polling. Zero until a watch
	// has read the file.
	LastCheck time.Time

	// SubPath is set once the watch found the file to be a single file
	// mounted on its own (a Kubernetes subPath mount, docker's -v of a
	// file): edits in place of its source arrive, a replacement does not
	// (see ErrSubPathMount).
	SubPath bool

	// SourceReplaced is set while the source of that mount is replaced:
	// the mount holds the old file, and no change made on the host side
	// reaches it until the mount is made again (see ErrSourceReplaced).
	// The watch judges it when it starts, at each re-check and poll, and
	// when the file's attributes change (its link count drops as its
	// source is replaced: on events, at once).
	SourceReplaced bool

	// WatchedDirs are the directories the provider watches for events now,
	// sorted: every directory the path goes through, or as far as it goes
	// for a missing file.
	WatchedDirs []string

	// What the application last got, from a read or with a callback; zero
	// if it got nothing yet. Nothing here is derived from the content in a
	// way that lets a reader of the stats test a guess at it: watched files
	// are often Secrets.
	Size       int64     // its size in bytes (a set's: all its files)
	ModTime    time.Time // the modification time of the file it was read from (a set's newest)
	Generation string    // the kubelet payload it came from (the target of ..data); "" outside a kubelet volume

	// Fingerprint tells one content from another within this process: an
	// HMAC-SHA256 of the content, under a key drawn at random when the
	// process starts that never leaves it. Equal fingerprints, equal
	// contents; it says nothing else, and differs from one process to the
	// next, so compare two versions through the same process's stats.
	Fingerprint string

	// SHA256 is the hex SHA-256 of the content, only with WithContentHash;
	// "" otherwise. Compare it with `sha256sum` of the file. (A set's is
	// over its files' names and contents together, which no tool computes:
	// compare its Generation.) Anyone who can read it can test guesses at
	// the content (a password, a token): never ask for it on a Secret.
	SHA256 string
}

// MarshalJSON renders the stats as JSON, with LastError as its text, so
// that they can be published as they are (expvar, a status endpoint).
func (s Stats) MarshalJSON() ([]byte, error) {
	type plain Stats // without this method
	var lastError string
	if s.LastError != nil {
		lastError = s.LastError.Error()
	}
	return json.Marshal(struct {
		plain
		LastError string
	}{plain(s), lastError})
}

// stats is what a provider records for Stats. Guarded by core.mu.
type stats struct {
	mode             Mode
	updates          uint64
	restarts         uint64
	errors           uint64
	lastUpdate       time.Time
	lastUpdateReason Reason
	lastError        error
	lastErrorTime    time.Time
	lastRead         time.Time
	lastCheck        time.Time // the last re-check that found the file unchanged
	subPath          bool
	mount            mountState
	dirs             []string
}

// got is what Stats tell of the content the application last got.
type got struct {
	size    int64
	modTime time.Time
	gen     string
}

func gotOf(d *content) got {
	return got{size: int64(d.size()), modTime: d.mtime, gen: d.gen}
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// fingerprintKey keys the fingerprints: drawn at random when the process
// starts, it never leaves it.
var fingerprintKey = func() []byte {
	key := make([]byte, 32)
	_, _ = rand.Read(key) // never fails (crypto/rand)
	return key
}()

// fingerprint is the keyed hash of a content's SHA-256: it tells contents
// apart within the process, and lets no one outside test a guess.
func fingerprint(sum [sha256.Size]byte) string {
	m := hmac.New(sha256.New, fingerprintKey)
	m.Write(sum[:])
	return hex.EncodeToString(m.Sum(nil))
}
