package file

import (
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"path/filepath"
	"time"

	"github.com/keepwatch/file/internal/decide"
	"github.com/keepwatch/file/internal/events"
	"github.com/keepwatch/file/internal/osfile"
)

// sink takes what a loop finds. The delivery that runs the loop is its
// sink (delivery.go), and decides what of it reaches the callback.
type sink interface {
	// found takes a read the decider accepted: not one taken while the
	// file was being written, nor a missing or empty file that may be the
	// middle of an update.
	found(r reading)
	// readFailed takes a read that failed for a reason of the process (too
	// many open files, no memory), which the loop retries.
	readFailed(err error)
	// watching says how the loop notices changes, and the directories it
	// watches, sorted: once it is open, and whenever they change.
	watching(mode Mode, dirs []string)
	// unchanged says that a look found the file as the last read left
	// it: the watch is looking.
	unchanged()
	// selfChanged says that an event told of a change to the file that
	// its content does not show, a change of its attributes (a link count
	// among them) or of its name (moved, or removed): a single file
	// mounted on its own shows its source's replacement so (mount.go). It
	// is told once the loop has carried out what the events asked.
	selfChanged()
	// waitsOn says that the loop waits on bell (see events.Bell), nil
	// once it no longer does: the watch's end and a request to look ring
	// it, after they are made.
	waitsOn(bell *events.Bell)
}

// loopKind is how a loop notices changes.
type loopKind uint8

const (
	onEvents     loopKind = iota // filesystem events, with the re-check as a safety net
	pollForced                   // polling, because WithPolling asked for it
	pollFallback                 // polling, standing in for events that failed
)

// watchLoop is one run of a watch, between two restarts: a notifier
// watching what the path depends on, and the decider (internal/decide)
// that says what its events and reads mean. The loop gathers and acts: it
// waits for events and timers, resolves the path, reads, stats and adds
// watches, hands each outcome to the decider with the facts it needs, and
// carries out each decision in full before it takes the next event. It
// knows nothing of the provider or the callback; it hands what the decider
// accepts to its sink. It ends, and the restart loop opens another, when:
//   - its context is done (the only end that is not a failure);
//   - its notifier reports an error, or closes a channel;
//   - the decider ends it (decide.Fail): a watch the path depends on
//     cannot be added, or nothing would tell of a change;
//   - it polls in place of events that failed, and it is time to try them
//     again (errTryEvents).
//
// A loop that polls has a notifier that never has events (events.None): it
// re-reads at the poll interval.
type watchLoop struct {
	t     target
	out   sink
	kind  loopKind
	n     events.Notifier
	d     *decide.Decider
	facts *eventFacts

	res         resolution      // the path's last resolution, which the decider was told of
	wanted      map[string]bool // paths whose events the notifier was asked for
	newlyWanted []string        // paths the last resolution wanted that were not wanted before it
	read        reading         // the read the decider judges now

	timer    *time.Timer // the decider's wake-up
	timerAt  time.Time   // when timer fires; zero if it is stopped
	onBell   bool        // the loop waits on its notifier's bell, with timerAt for its deadline: timer is not used
	remoteFS string      // the file's filesystem delivers no events for remote changes
	// pollRemote says the loop polls besides its events, as the
	// supervisor decided for a file on such a filesystem.
	pollRemote bool
	// tryEvents ends a poll loop that stands in for events.
	tryEvents *time.Timer

	queued, late []decide.Event // the queue's, kept from one read to the next
	held, more   []decide.Event // taken from the notifier, not handed in yet (see event); kept from one batch to the next
	lateFacts    *eventFacts    // facts for the late events, apart from the queued ones'

	selfSeen bool // an event told of a change of the file's attributes or name, not told to the sink yet (noteSelfChanges)
}

// openLoop creates a notifier and makes it watch what the path depends
// on. The sink is told of the loop once it is open.
func openLoop(t target, out sink) (*watchLoop, error) {
	n, err := t.opts.newNotifier()
	if err != nil {
		return nil, err
	}
	l := newLoop(t, n, onEvents)
	if err := l.carryOut(l.step(decide.Input{Kind: decide.InputOpen, Now: time.Now()})); err != nil {
		l.close()
		return nil, err
	}
	if name, none := t.opts.fsType(l.res.Home); none {
		l.remoteFS = name
	}
	l.out = out
	l.tellWatching()
	return l, nil
}

// newPollLoop makes a loop that polls. A fallback, standing in for events
// that failed, ends after decide.EventRetryInterval so that they are tried again.
func newPollLoop(t target, out sink, fallback bool) *watchLoop {
	l := newLoop(t, events.None{}, pollForced)
	if fallback {
		l.kind = pollFallback
		l.tryEvents = time.NewTimer(decide.EventRetryInterval)
	}
	// It opens as any loop does: one that polls watches nothing, and
	// holds still at once.
	_ = l.carryOut(l.step(decide.Input{Kind: decide.InputOpen, Now: time.Now()}))
	l.out = out
	out.watching(ModePolling, nil)
	return l
}

func newLoop(t target, n events.Notifier, kind loopKind) *watchLoop {
	l := &watchLoop{t: t, n: n, kind: kind, facts: newEventFacts(t.subj), wanted: make(map[string]bool)}
	l.d = decide.New(decide.Config{Window: t.opts.quiet, Caps: n.Caps(), Events: kind == onEvents,
		Paths: l.facts.paths, Inodes: platformInodes{},
		RetryMin: t.opts.backoffMin, RetryMax: t.opts.backoffMax, Seed: randomSeed()})
	return l
}

// events reports whether the loop has events: it does not poll for want
// of them.
func (l *watchLoop) events() bool { return l.kind == onEvents }

// polls reports whether the loop re-reads at the poll interval: it has no
// events, or its file is on a filesystem that reports no events for
// remote changes.
func (l *watchLoop) polls() bool { return !l.events() || l.pollRemote }

// mode is how the loop notices changes.
func (l *watchLoop) mode() Mode {
	if l.polls() {
		return ModePolling
	}
	return ModeEvents
}

// event hands the decider ev, the event the loop woke for, and every
// event queued behind it, with the facts of this moment they need: one
// gathering of them answers for all the decider takes before it asks for
// something to be done (a kubelet update's old payload going is seven
// events in a row, each of which had a stat of its own), and the rest go
// in once that is done, with facts gathered again. Events at the head that
// need no facts go in first, alone, with none: a file renamed over the
// path is read at once, and the stat its old file's events ask for is
// taken after, not on the way to the callback. (The decider takes events
// one by one either way, and does nothing at the end of a lot in which
// none asked for anything.)
//
// Events taken from the notifier and not handed in yet are held
// (l.held): a queue taken meanwhile, for a read, takes them first, in
// their order.
func (l *watchLoop) event(ev decide.Event) error {
	held, more, closed := drain(l.n.Events(), append(l.held[:0], ev), l.more[:0])
	l.held, l.more = append(held, more...), more[:0]
	for i := range l.held {
		l.held[i].Name = cleanName(l.held[i])
	}
	l.noteSelfChanges(l.held)
	for len(l.held) > 0 {
		evs, f := l.facts.gatherFirst(l.held, l.d)
		d := l.step(decide.Input{Kind: decide.InputEvents, Events: evs, Facts: f, Now: time.Now()})
		l.held = l.held[:copy(l.held, l.held[d.Taken:])]
		if err := l.carryOutAfter(d, l.facts.fileStat()); err != nil {
			return err
		}
	}
	if closed {
		return events.ErrEventsClosed
	}
	return nil
}

// look is the periodic re-check, a poll, and Recheck's look now (force):
// the decider says what it does, from the subject's stat.
func (l *watchLoop) look(why decide.Reason, force bool) error {
	return l.carryOut(l.step(decide.Input{Kind: decide.InputLook, Why: why, Force: force, Stat: l.t.subj.stat(), Now: time.Now()}))
}

// carryOut carries out d, and each decision that the outcome of its action
// brings, until the decider has nothing more to ask: then the loop may
// take the next event.
func (l *watchLoop) carryOut(d decide.Decision) error {
	return l.carryOutAfter(d, nil)
}

// carryOutAfter is carryOut for a decision on events whose facts held
// stat, the stat of a single file's path (nil if they did not): where its
// first action is to stamp the file and take the queue before a read (an
// in-place write's close, counted), the stamp is stat's, taken a moment
// before, after the events. A change in between is one the queue tells
// of, and the decider then has the file stamped again.
func (l *watchLoop) carryOutAfter(d decide.Decision, stat fs.FileInfo) error {
	for {
		first := stat // the events' stat answers for the first action alone
		stat = nil
		l.apply(d)
		a := d.Next
		now := time.Now()
		switch a.Kind {
		case decide.Nothing:
			return nil
		case decide.Fail:
			return a.Err
		case decide.Resolve:
			res := l.resolve(a)
			var file fs.FileInfo
			if a.StatFile {
				file = statOrNil(l.facts.paths[0])
			}
			d = l.step(decide.Input{Kind: decide.InputResolved, Resolution: res, Unheard: l.unheard(), File: file, Now: now})
		case decide.ReadNow:
			var via *resolution
			if a.Via {
				via = &l.res
			}
			l.read = l.t.subj.read(a.Why, via, a.Ask && l.t.opts.probeWriters, a.First)
			l.read.first = a.First
			d = l.step(decide.Input{Kind: decide.InputRead, Read: factsOf(l.t.subj, &l.read), Now: time.Now()})
		case decide.TakeQueue:
			var st decide.Stamp
			switch {
			case !a.StampFirst:
			case first != nil:
				st = osfile.StampOf(first)
			default:
				st = l.t.subj.stamp()
			}
			q, closed := l.takeQueue(a.AwaitTruncation)
			if closed {
				return events.ErrEventsClosed
			}
			q.Stamp = st
			d = l.step(decide.Input{Kind: decide.InputQueue, Queue: q, Now: now})
		case decide.AddWatch:
			d = l.step(decide.Input{Kind: decide.InputAdded, Add: l.add(a.Path, a.Report), Now: now})
		case decide.AddOwnWatch:
			res := l.add(a.Path, a.Report)
			var after fs.FileInfo
			writers := decide.WritersUnknown
			if res.Err == nil {
				after = lstatOrNil(a.Path)
				if after != nil && l.t.opts.probeWriters {
					writers = osfile.WritersOf(a.Path, a.File) // unknown if the path is another file now
				}
			}
			d = l.step(decide.Input{Kind: decide.InputOwnWatchAdded, Add: res, File: after, Writers: writers, Now: now})
		case decide.AskInode:
			of, ok := l.n.Inode(a.Watch)
			d = l.step(decide.Input{Kind: decide.InputInode, Inode: of, Known: ok, Now: now})
		case decide.CheckPath:
			d = l.check(a, now)
		}
	}
}

// apply carries out a decision's effects: the read accepted goes to the
// sink, the watches the kernel dropped or the path no longer needs are
// removed, and the timer is set to when the decider is to be told the time.
func (l *watchLoop) apply(d decide.Decision) {
	forward(l.out, d.Forward, l.read)
	for _, p := range d.Dropped {
		l.n.Remove(p)
	}
	if d.Unchanged {
		l.out.unchanged()
	}
	for _, p := range d.Remove {
		l.n.Remove(p)
	}
	if d.Prune {
		l.wantOnlyNeeded()
	}
	if d.DirsChanged {
		l.tellWatching()
	}
	l.setTimer(d.WakeAt)
}

// setTimer sets the loop's timer to at, if it is not set so already.
func (l *watchLoop) setTimer(at time.Time) {
	if at.Equal(l.timerAt) || l.timer == nil {
		return
	}
	l.timerAt = at
	if l.onBell {
		return // the bell's deadline stands in for the timer: see loopOnBell
	}
	if at.IsZero() {
		l.timer.Stop()
		return
	}
	l.timer.Reset(time.Until(at))
}

// resolve resolves the path as a asks: from the root, or resumed from the
// first name an event touched since the last resolution (what comes before
// it cannot have changed, or an event would have said so). Every name the
// resolution looks up is wanted before it is looked up, so that no change
// to it can fall between the look and the wish.
func (l *watchLoop) resolve(a decide.Action) decide.Resolution {
	l.newlyWanted = l.newlyWanted[:0]
	if a.FromRoot {
		l.res = l.t.subj.resolve(l.want, nil, nil)
	} else {
		prev := l.res
		l.res = l.t.subj.resolve(l.want, &prev, a.Touched)
	}
	return l.res.Resolution
}

// want asks the notifier for the events that name path, unless it has
// already: the notifier takes the hub's lock for it, which its backend
// holds while it hands on events, and a kubelet update's own events would
// hold up every name of the path looked up again after it.
func (l *watchLoop) want(path string) {
	if !l.events() || l.wanted[path] {
		return
	}
	l.wanted[path] = true
	l.newlyWanted = append(l.newlyWanted, path)
	l.n.Want(path)
}

// unheard reports whether a file the last resolution led to was not
// wanted before it (a symlink retargeted to a file in a directory watched
// already): events on it went to no one until then, a writer's among them.
func (l *watchLoop) unheard() bool {
	for _, f := range l.res.Files {
		for _, p := range l.newlyWanted {
			if p == f {
				return true
			}
		}
	}
	return false
}

// wantOnlyNeeded drops the wishes for the events of names the path's
// resolution no longer looks up.
func (l *watchLoop) wantOnlyNeeded() {
	keep := l.res.want()
	l.n.WantOnly(keep)
	for p := range l.wanted {
		if !keep[p] {
			delete(l.wanted, p)
		}
	}
}

// add watches path for what report asks, and says what that came to.
func (l *watchLoop) add(path string, report decide.WatchKind) decide.AddResult {
	id, err := l.n.Add(path, report)
	return decide.AddResult{ID: id, Err: err, Kind: errKindOf(err)}
}

// errKindOf says what an error of the notifier is, to the decider.
func errKindOf(err error) decide.ErrKind {
	switch {
	case err == nil:
		return decide.ErrOther
	case osfile.Vanished(err):
		return decide.ErrVanished
	case osfile.Refused(err):
		return decide.ErrRefused
	case osfile.Limited(err):
		return decide.ErrLimited
	}
	return decide.ErrOther
}

// check resolves the path again, from the first name a says on, once a
// read's watches are added, and tells the decider whether it moved
// meanwhile, and if not, the subject's stat now. For one file, where the
// resolution looked the file up again just now, that lstat is its stat:
// the path leads the same way, and what comes before the names looked up
// again is told of by events.
func (l *watchLoop) check(a decide.Action, now time.Time) decide.Decision {
	v := l.t.subj.resolveAgain(l.want, &l.res, a.Touched)
	moved := !v.same(&l.res)
	var st decide.Signature
	switch {
	case moved:
	case v.One && v.chain.RealInfo != nil && v.chain.RealInfo != l.res.chain.RealInfo:
		st = signOf(0, "", v.chain.RealInfo)
	default:
		st = l.t.subj.stat()
	}
	return l.step(decide.Input{Kind: decide.InputPathChecked, Moved: moved, Stat: st, Now: now})
}

// takeQueue takes every event the kernel queued by now, and those that
// come while they are taken, with the facts each lot needs: the queued
// events happened before the facts taken for them, which answer for all of
// them; those that came after are judged with facts of their own. They
// are taken here, not by the loop, and none of them is handed in again. A
// read that found nothing first waits out a truncation under way, so that
// the next writer's O_TRUNC has queued its event (osfile.AwaitTruncation).
func (l *watchLoop) takeQueue(truncation bool) (decide.Queue, bool) {
	if truncation {
		for _, p := range l.t.subj.paths() {
			osfile.AwaitTruncation(p)
		}
	}
	l.n.Sync()
	queued, late, closed := drain(l.n.Events(), append(l.queued[:0], l.held...), l.late[:0])
	l.held = l.held[:0]             // taken now, first, in their order
	l.queued, l.late = queued, late // kept for the next time
	if closed {
		return decide.Queue{}, true
	}
	for i := range queued {
		queued[i].Name = cleanName(queued[i])
	}
	for i := range late {
		late[i].Name = cleanName(late[i])
	}
	l.noteSelfChanges(queued)
	l.noteSelfChanges(late)
	q := decide.Queue{Queued: queued, Late: late}
	q.QueuedFacts = l.facts.gather(queued, l.d)
	q.LateFacts = q.QueuedFacts
	if len(late) > 0 {
		if l.lateFacts == nil {
			l.lateFacts = newEventFacts(l.t.subj)
		}
		q.LateFacts = l.lateFacts.gather(late, l.d)
		if len(q.LateFacts.Paths) == 0 {
			// Whether the file read is still there is asked of the late
			// events' facts, whatever those events needed themselves.
			l.lateFacts.statSubject()
			q.LateFacts = l.lateFacts.f
		}
	}
	return q, false
}

// cleanName is ev's name, clean.
func cleanName(ev decide.Event) string {
	if ev.Has(decide.OpRescan) {
		return ev.Name
	}
	return filepath.Clean(ev.Name)
}

// drain takes the events in ch: those in it when it is called (queued),
// and those that come while they are taken (late), appended to the slices
// given. closed reports that ch was closed.
func drain(ch <-chan decide.Event, queued, late []decide.Event) ([]decide.Event, []decide.Event, bool) {
	n := len(queued) + len(ch)
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				return queued, late, true
			}
			if len(queued) < n {
				queued = append(queued, ev)
			} else {
				late = append(late, ev)
			}
		default:
			return queued, late, false
		}
	}
}

// close releases the loop's timers and notifier. A notifier's close error
// only says it was already broken; the loop is over either way.
func (l *watchLoop) close() {
	if l.tryEvents != nil {
		l.tryEvents.Stop()
	}
	if err := l.n.Close(); err != nil {
		l.t.opts.log().Debug("keepwatch: closing notifier", slog.String("path", l.t.path), slog.Any("error", err))
	}
}

// tellWatching tells the sink, once it has one, what is watched now.
func (l *watchLoop) tellWatching() {
	if l.out == nil {
		return
	}
	var dirs []string
	if l.events() {
		dirs = l.d.WatchedDirs()
	}
	l.out.watching(l.mode(), dirs)
}

// The decider takes a change of attributes that leaves the file's stat as
// the last read left it for nothing (a chmod, a touch), and a move of the
// file that leaves the path leading to it for nothing but a look. They mean
// something to the provider where a single file is mounted on its own: its
// link count drops to 0 when the host replaces its source, and the file is
// moved when the host renames its source away (mv, an editor's backup
// copy), both of which the file's own watch hears at once (mount.go). The
// loop passes such events on to its sink, once per turn, after it has
// carried out what they asked.

// noteSelfChanges notes a change of attributes, a move or a removal among
// evs.
func (l *watchLoop) noteSelfChanges(evs []decide.Event) {
	for _, ev := range evs {
		if ev.Has(decide.OpAttrib | decide.OpRemove) {
			l.selfSeen = true
			return
		}
	}
}

// tellSelfChanges tells the sink of the changes noted since it last did,
// if any.
func (l *watchLoop) tellSelfChanges() {
	if l.selfSeen {
		l.selfSeen = false
		l.out.selfChanged()
	}
}

// randomSeed seeds every backoff: the one source of the watch's
// randomness. Tests that compare two builds' decisions fix it.
var randomSeed = rand.Uint64

// forward hands r on as the decider said: accepted, it goes on to the
// delivery; failing for a reason of the process, it is told of.
func forward(out sink, f decide.Forward, r reading) {
	switch f {
	case decide.ForwardRead:
		out.found(r)
	case decide.ForwardFailure:
		out.readFailed(r.err)
	}
}

// step hands in to the decider, and tells a test's trace of the step.
func (l *watchLoop) step(in decide.Input) decide.Decision {
	d := l.d.Step(in)
	if l.t.opts.trace != nil {
		l.t.opts.trace(in, d)
	}
	return d
}
