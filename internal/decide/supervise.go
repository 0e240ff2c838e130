package decide

import "time"

// EventRetryInterval is how long a poll loop standing in for events that
// failed runs before events are tried again.
const EventRetryInterval = 30 * time.Second

// LoopEnd is why a watch's loop ended, as the restart loop tells it from
// the loop's error.
type LoopEnd uint8

const (
	EndStopped           LoopEnd = iota // the watch is over: its context is done
	EndTryEvents                        // a poll loop standing in for events ran EventRetryInterval: events are tried again
	EndEventsUnavailable                // events cannot be had: no inotify instance or watch left, or the platform has none
	EndFailed                           // anything else: a watch could not be added, the notifier reported an error or closed a channel
)

var loopEndNames = [...]string{"stopped", "try events", "events unavailable", "failed"}

func (e LoopEnd) String() string { return loopEndNames[e] }

// Run is what the supervisor has run next.
type Run uint8

const (
	RunEvents  Run = iota // a loop on events, now
	RunPoll               // a poll loop standing in for events, which ends after EventRetryInterval for them to be tried again
	RunRetry              // a loop on events once After has passed, or at once if a look is asked for meanwhile
	RunNothing            // nothing: the watch is over
)

var runNames = [...]string{"events", "poll", "retry", "nothing"}

func (r Run) String() string { return runNames[r] }

// Supervision is what the supervisor decided of a loop's end.
type Supervision struct {
	Run   Run
	After time.Duration // RunRetry: the backoff's delay
	// Told says the loop's end is a problem to tell (an interruption):
	// polling in place of events (RunPoll), or retrying after After
	// (RunRetry).
	Told bool
	// Restart says it counts as a restart of the watch: not when events,
	// tried again from a poll loop, are still unavailable.
	Restart bool
	// Failures is how many loops failed in a row, this one included.
	Failures int
}

// Tell is how a loop that starts to run is told.
type Tell uint8

const (
	TellStarted Tell = iota // the watch started (debug)
	TellRearmed             // the watch is re-armed after failures (info)
	TellPolling             // the watch polls, as WithPolling asked (debug)
	TellNothing             // nothing: a poll loop standing in for events was told when events failed
)

// Start is what the supervisor decided of a loop that starts to run.
type Start struct {
	Tell    Tell
	Rearmed int // TellRearmed: how many loops failed in a row before this one
	// PollRemote says that the file is on a filesystem that reports no
	// events for changes made elsewhere (NFS, SMB, FUSE...): the loop
	// watches for local changes and polls at the poll interval besides.
	// TellRemote says this is to be told: once per filesystem.
	PollRemote, TellRemote bool
}

// LoopStart is what a loop that starts to run is, as the restart loop
// tells it: whether it polls (WithPolling asked, or it stands in for
// events that failed), and the filesystem that reports no events for
// remote changes that its file is on, if any ("" if none).
type LoopStart struct {
	Polls, Fallback bool
	Remote          string
}

// Supervisor makes the decisions of a watch's restart loop: from how each
// loop ended, what runs next (events, a poll loop standing in for them, a
// retry after a backoff); from how each starts, how it is told and how it
// polls. It does no I/O and reads no clock; the restart loop (restart.go)
// carries out what it decides. It is not safe for concurrent use: one
// watch's restart loop owns it.
type Supervisor struct {
	bo       *Backoff
	failures int    // loops that failed in a row since the last that started on events
	polling  bool   // the last loop was a poll loop standing in for events
	remote   string // the filesystem without remote events last told of
}

// NewSupervisor returns the supervisor of one watch, whose retries back
// off from about lo to hi, jittered from seed.
func NewSupervisor(lo, hi time.Duration, seed uint64) *Supervisor {
	return &Supervisor{bo: NewBackoff(lo, hi, seed)}
}

// Ended decides what follows a loop that ended so, having run for ran: a
// loop stopped is the watch's end; one that polled in place of events
// hands over to events at once; where events cannot be had, a poll loop
// stands in for them, with no backoff (polling is its own wait); any
// other end is retried after the backoff's next delay, which starts again
// from its least after a loop that ran its cap.
func (s *Supervisor) Ended(end LoopEnd, ran time.Duration) Supervision {
	switch end {
	case EndStopped:
		return Supervision{Run: RunNothing}
	case EndTryEvents:
		return Supervision{Run: RunEvents}
	case EndEventsUnavailable:
		again := s.polling // trying events from polling failed again: no restart
		s.failures++
		s.polling = true
		return Supervision{Run: RunPoll, Told: true, Restart: !again, Failures: s.failures}
	}
	s.failures++
	s.polling = false
	return Supervision{Run: RunRetry, After: s.bo.Next(ran), Told: true, Restart: true, Failures: s.failures}
}

// Started decides how a loop that starts to run is told: a poll loop that
// stands in for events is not (its cause was); a loop on events after
// failures re-arms the watch; one whose file is on a filesystem without
// remote events polls besides, told once per filesystem.
func (s *Supervisor) Started(l LoopStart) Start {
	switch {
	case l.Fallback:
		return Start{Tell: TellNothing}
	case l.Polls:
		return Start{Tell: TellPolling}
	}
	st := Start{Tell: TellStarted}
	if s.failures > 0 {
		st.Tell, st.Rearmed = TellRearmed, s.failures
	}
	s.failures, s.polling = 0, false
	if l.Remote != "" {
		st.PollRemote, st.TellRemote = true, l.Remote != s.remote
		s.remote = l.Remote
	}
	return st
}
