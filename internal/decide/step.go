package decide

import (
	"io/fs"
	"time"
)

// InputKind is what an Input tells the decider.
type InputKind uint8

const (
	// InputOpen: a loop opens. It asks for the path to be resolved and
	// watched until it holds still (Resolve, AddWatch); a loop that polls
	// holds still at once.
	InputOpen InputKind = iota
	// InputStart: the read a loop starts with, made by the loop once it is
	// open (Read).
	InputStart
	// InputEvents: events the loop found queued when it woke, their names
	// clean, with the facts gathered for them (Events, Facts).
	InputEvents
	// InputTimer: the time reached the last decision's WakeAt.
	InputTimer
	// InputLook: the periodic re-check, a poll, or Recheck's look now
	// (Why, Force, Stat: the subject's stat).
	InputLook
	// InputResolved: the outcome of Resolve (Resolution, Unheard, File).
	InputResolved
	// InputRead: the outcome of ReadNow (Read).
	InputRead
	// InputQueue: the outcome of TakeQueue (Queue).
	InputQueue
	// InputAdded: the outcome of AddWatch (Add).
	InputAdded
	// InputOwnWatchAdded: the outcome of AddOwnWatch (Add, File: the
	// path's lstat right after, Writers).
	InputOwnWatchAdded
	// InputInode: the outcome of AskInode (Inode, Known).
	InputInode
	// InputPathChecked: the outcome of CheckPath (Moved, Stat).
	InputPathChecked
)

var inputKindNames = [...]string{"open", "start", "events", "timer", "look", "resolved", "read", "queue", "added",
	"own watch added", "inode", "path checked"}

func (k InputKind) String() string { return inputKindNames[k] }

// Input is one thing that happened, as the loop tells the decider: its
// kind, the time, and the fields its kind names (the others are zero).
type Input struct {
	Kind InputKind
	Now  time.Time

	Events []Event // InputEvents, their names clean
	Facts  Facts   // InputEvents: gathered once they were all taken

	Read Read // InputStart, InputRead

	Why   Reason    // InputLook
	Force bool      // InputLook: Recheck's look now
	Stat  Signature // InputLook, InputPathChecked: the subject's stat now

	Resolution Resolution // InputResolved
	// Unheard (InputResolved) says that a file the resolution led to was
	// not wanted before it: events on it went to no one until then.
	Unheard bool
	// File is, for InputResolved, what the path leads to now, if Resolve
	// asked for its stat (StatFile); for InputOwnWatchAdded, the path's
	// lstat right after the Add (nil if nothing is there).
	File fs.FileInfo

	Queue Queue // InputQueue

	Add     AddResult // InputAdded, InputOwnWatchAdded
	Writers Writers   // InputOwnWatchAdded: what the kernel said then of the file's writers

	Inode WatchedInode // InputInode
	Known bool         // InputInode: the notifier could tell

	Moved bool // InputPathChecked: the path moved while the read's watches were added
}

// awaits says which inputs each phase takes: idle, those that begin
// something; every other phase, the outcome of the action it asked for.
// This is the table docs/internals.md shows (TestStepTakesWhatEachPhaseAwaits).
var awaits = [...][]InputKind{
	idle:           {InputOpen, InputStart, InputEvents, InputTimer, InputLook},
	resolving:      {InputResolved},
	watchingPath:   {InputResolved},
	resolvingAfter: {InputResolved},
	reading:        {InputRead},
	queueing:       {InputQueue},
	queueingFirst:  {InputQueue},
	adding:         {InputAdded},
	checking:       {InputPathChecked},
	addingOwn:      {InputOwnWatchAdded},
	askingInode:    {InputInode},
}

// takes reports whether the decider in phase p takes an input of kind k.
func takes(p phase, k InputKind) bool {
	for _, a := range awaits[p] {
		if a == k {
			return true
		}
	}
	return false
}

// Step takes one input and returns the decision it comes to: the one way
// in. The decider takes only what its phase awaits (see awaits): any
// input while idle, else the outcome of the action it asked for last; an
// input out of turn is the loop's bug, and panics. The decision's
// slices are the decider's, valid until the next Step.
//
// A loop's inputs begin with InputOpen (on events, the path resolved and
// watched until it holds still: InputResolved and InputAdded, round by
// round), then the read the loop makes itself, InputStart. After that,
// anything the idle phase takes, each followed by the outcomes of the
// actions its decision asks for, one at a time, until a decision's action
// is Nothing (or Fail, which ends the loop).
func (d *Decider) Step(in Input) Decision {
	p := d.phase
	if !takes(p, in.Kind) {
		d.unexpected(in.Kind)
	}
	d.out, d.phase = Decision{}, idle
	now := in.Now
	switch in.Kind {
	case InputOpen:
		d.open(now)
	case InputStart:
		d.start(in.Read, now)
	case InputEvents:
		d.events(in.Events, in.Facts, now)
	case InputTimer:
		d.timer(now)
	case InputLook:
		d.look(in.Why, in.Force, in.Stat, now)
	case InputResolved:
		d.resolved(p, in.Resolution, in.Unheard, in.File, now)
	case InputRead:
		d.judgeReadNow(in.Read, now)
	case InputQueue:
		d.queue(p, in.Queue, now)
	case InputAdded:
		d.added(in.Add, now)
	case InputOwnWatchAdded:
		d.ownWatchAdded(in.Add, in.File, in.Writers, now)
	case InputInode:
		d.inodeOf(in.Inode, in.Known, now)
	case InputPathChecked:
		d.pathChecked(in.Moved, in.Stat, now)
	}
	return d.end(now)
}
