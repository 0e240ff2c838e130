package file

import (
	"encoding/hex"
	"encoding/json"
	"slices"
	"time"
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

// Stats is a snapshot of what a provider has done, from [File.Stats]. The
// counters cover the provider's whole life, across Watch calls, so they
// suit monitoring systems that expect counters to only grow.
type Stats struct {
	Path string // the path given to Provider
	Mode Mode   // how changes are noticed now

	Updates  uint64 // callbacks fired with new content
	Restarts uint64 // watches re-armed, or fallen back to polling, after a failure
	Errors   uint64 // problems reported to the callback (file or watch)

	LastUpdate       time.Time // when the last update was delivered; zero if none
	LastUpdateReason string    // why it was read: start, restart, event, write or recheck
	LastError        error     // the last problem reported; nil if none
	LastErrorTime    time.Time // when it was reported

	// WatchedDirs are the directories the provider watches for events now,
	// sorted: the file's directory and those of every symlink target on
	// its way, or the nearest existing ancestor of a missing file.
	WatchedDirs []string

	// Hash is the hex SHA-256 of the content the application last got,
	// from ReadBytes or with a callback; "" if it never got any. Compare it
	// with `sha256sum` of the file to see whether the running config is
	// the one on disk.
	Hash string
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

// stats is what a provider records for Stats. Guarded by File.mu.
type stats struct {
	mode             Mode
	updates          uint64
	restarts         uint64
	errors           uint64
	lastUpdate       time.Time
	lastUpdateReason reason
	lastError        error
	lastErrorTime    time.Time
	dirs             []string
}

// snapshot returns the Stats of a provider.
func (c *core) snapshot() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.stats
	s := Stats{
		Path:             c.t.path,
		Mode:             ModeStopped,
		Updates:          st.updates,
		Restarts:         st.restarts,
		Errors:           st.errors,
		LastUpdate:       st.lastUpdate,
		LastUpdateReason: string(st.lastUpdateReason),
		LastError:        st.lastError,
		LastErrorTime:    st.lastErrorTime,
	}
	if c.sv != nil && !c.sv.stopped() {
		s.Mode = st.mode
		s.WatchedDirs = slices.Clone(st.dirs)
	}
	if c.seen.state == seenContent {
		s.Hash = hex.EncodeToString(c.seen.sum[:])
	}
	return s
}
