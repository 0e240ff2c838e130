package file

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"time"
)

// maxWatchRounds bounds how often watchChain re-resolves a chain that keeps
// changing while watches are being added; events bring it back if it gives
// up.
const maxWatchRounds = 8

// eventRetryInterval is how often a session that polls because events
// failed ends, so that events are tried again.
const eventRetryInterval = 30 * time.Second

// sink takes what a session finds. The watch that runs the session is its
// sink (delivery.go), and decides what of it reaches the callback.
type sink interface {
	// found takes a read the session believes: not one taken while the file
	// was being written, nor a missing or empty file that may be the middle
	// of an update.
	found(r reading)
	// watching says how the session notices changes, and the directories
	// it watches, sorted: once it is open, and whenever they change.
	watching(mode Mode, dirs []string)
	// started says that the session runs now, and how; remote names the
	// filesystem that reports no remote changes, if the file is on one.
	started(kind sessionKind, remote string)
}

// sessionKind is how a session notices changes.
type sessionKind uint8

const (
	onEvents     sessionKind = iota // filesystem events, with the re-check as a safety net
	pollForced                      // polling, because WithPolling asked for it
	pollFallback                    // polling, standing in for events that failed
)

// session is one run of a watch: a notifier watching the directories the
// path's current resolution depends on. It re-resolves and re-reads on
// every relevant event, and hands what it reads to its sink. It knows
// nothing of the provider or the callback; it ends when its notifier fails
// or its context is done.
//
// A session without a notifier polls: it re-reads at the poll interval.
type session struct {
	t       target
	out     sink
	kind    sessionKind
	n       notifier         // nil for a poll session
	caps    caps             // what n can see
	view    sight            // what the subject's current resolution depends on
	watched map[string]bool  // paths the notifier watches: directories, and the files themselves
	wanted  map[string]bool  // paths whose events the notifier was asked for
	anew    []string         // paths the last resolution wanted that were not wanted before it
	refused map[string]error // paths a watch was refused on, and why; tried again at each look
	sig     signature        // the stat of the last read believed; zero if it failed
	readSig signature        // the stat of the last read made, believed or not; zero if it failed
	info    fs.FileInfo      // the file of the last read believed; nil for a set, or if it failed

	writes       int             // in-place writes seen, counted to tell whether a writer began
	writing      fs.FileInfo     // the file a wait for writers is for; nil if not known
	writingSeen  int             // writes seen when writing was taken: see changedUnheard
	restat       bool            // the path may lead elsewhere since writing was taken: the next write says which file is written
	watchesGone  int             // directory watches the kernel dropped, counted to tell whether a read came through one
	filesGone    int             // removals of the file itself seen, counted to tell whether a read came before one
	heldBack     time.Time       // since when reads have been left to later writers; zero if the last was believed
	retry        retry           // the retry of a read that failed for a reason of the process
	touched      map[string]bool // paths events named since the last resolution
	touchedAll   bool            // events were lost since the last resolution: resolve from the root
	chainTouched int             // events on names on the way to the file, counted to tell whether the path may lead elsewhere
	lookAgain    bool            // a relevant event asks to resolve and read again
	lookFresh    bool            // and what is read may have been written where no watch saw it
	readNow      bool            // the writer closed the file: read it, and believe what is read
	rewatchAll   bool            // events were lost: re-add every watch too
	dirsDirty    bool            // watched changed since the sink was last told
	settle       settle          // the wait for the file to settle, if any
	glance       glance          // the stats taken for the events queued at a read: see noLaterWriter

	remoteFS  string      // the file's filesystem delivers no events for remote changes
	tryEvents *time.Timer // ends a poll session that stands in for events
}

// openSession creates a notifier and makes it watch what the path depends
// on. The sink is told of the session once it is open.
func openSession(t target, out sink) (*session, error) {
	n, err := t.opts.newNotifier()
	if err != nil {
		return nil, err
	}
	s := newSession(t, n, onEvents)
	if err := s.watchChain(false); err != nil {
		s.close()
		return nil, err
	}
	if name, none := t.opts.fsType(s.view.home); none {
		s.remoteFS = name
	}
	s.out, s.dirsDirty = out, true
	s.tellWatching()
	return s, nil
}

// newPollSession makes a session that polls. A fallback, standing in for
// events that failed, ends after eventRetryInterval so that they are tried
// again.
func newPollSession(t target, out sink, fallback bool) *session {
	s := newSession(t, nil, pollForced)
	if fallback {
		s.kind = pollFallback
		s.tryEvents = time.NewTimer(eventRetryInterval)
	}
	s.out = out
	out.watching(ModePolling, nil)
	return s
}

func newSession(t target, n notifier, kind sessionKind) *session {
	s := &session{t: t, n: n, kind: kind, watched: make(map[string]bool), wanted: make(map[string]bool), refused: make(map[string]error),
		settle: settle{window: t.opts.quiet}, retry: retry{bo: backoff{min: t.opts.backoffMin, max: t.opts.backoffMax}}}
	if n != nil {
		s.caps = n.Caps()
	}
	return s
}

// pollOnly reports whether this is a poll session: it has no notifier.
func (s *session) pollOnly() bool { return s.n == nil }

// polls reports whether the session re-reads at the poll interval: it is
// a poll session, or its file is on a filesystem that reports no events
// for remote changes.
func (s *session) polls() bool { return s.pollOnly() || s.remoteFS != "" }

// mode is how the session notices changes.
func (s *session) mode() Mode {
	if s.polls() {
		return ModePolling
	}
	return ModeEvents
}

// watchedDirs lists the directories watched, sorted; nil for a poll
// session.
func (s *session) watchedDirs() []string {
	if s.pollOnly() {
		return nil
	}
	var dirs []string
	for p := range s.watched {
		if !slices.Contains(s.view.files, p) {
			dirs = append(dirs, p)
		}
	}
	slices.Sort(dirs)
	return dirs
}

// run hands first, the read made when the session was opened, to the sink,
// then handles events, and requests to look now from look, until the
// session fails or ctx is done; it returns nil only in the latter case.
func (s *session) run(ctx context.Context, first reading, look <-chan struct{}) error {
	s.out.started(s.kind, s.remoteFS)
	// While the watch was down, no event told of writers.
	s.readSig = first.c.sig // as read does: the watch step compares with it
	s.offer(first, doubtful, first.why == ReasonRestart)
	if err := s.watchAfterRead(false); err != nil {
		return err
	}
	return s.loop(ctx, look)
}

func (s *session) loop(ctx context.Context, look <-chan struct{}) error {
	var (
		events  <-chan event
		errs    <-chan error
		tick    <-chan time.Time
		recheck *time.Timer
		every   = s.recheckEvery()
	)
	if s.n != nil {
		events, errs = s.n.Events(), s.n.Errors()
	}
	if every > 0 {
		recheck = time.NewTimer(untilTick(every))
		defer recheck.Stop()
		tick = recheck.C
	}
	var retry <-chan time.Time
	if s.tryEvents != nil {
		retry = s.tryEvents.C
	}
	for {
		// A read can ask for another (the chain moved while its watches
		// were being added; events it took say a writer began or events
		// were lost). Nothing else would wake the loop for it.
		for s.lookAgain || s.readNow {
			why, t := ReasonEvent, doubtful
			if s.readNow {
				why, t = ReasonWrite, closedByWriter
			}
			s.lookAgain, s.readNow = false, false
			if err := s.refresh(why, t); err != nil {
				return err
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-retry:
			return errTryEvents
		case ev, ok := <-events:
			if !ok {
				return errEventsClosed
			}
			s.onEvent(ev)
		case err, ok := <-errs:
			if !ok {
				return errErrorsClosed
			}
			return err
		case <-s.settle.C():
			if err := s.refresh(s.settle.fired()); err != nil {
				return err
			}
		case <-s.retry.C():
			s.lookFresh = s.retry.wasFresh()
			if err := s.refresh(s.retry.fired()); err != nil {
				return err
			}
		case <-tick:
			recheck.Reset(untilTick(every))
			if err := s.look(ReasonRecheck, false); err != nil {
				return err
			}
		case <-look:
			if ctx.Err() != nil {
				return nil // stopping: the request was for a watch that is over
			}
			if err := s.look(ReasonRequest, true); err != nil {
				return err
			}
		}
	}
}

// untilTick returns the time until the next multiple of every on the clock.
// Every provider with the same interval re-checks at the same instants, so
// ten thousand of them wake the process once per interval rather than ten
// thousand times at scattered moments: on some virtual machines a wake-up
// from sleep costs far more than the stat it is for.
func untilTick(every time.Duration) time.Duration {
	now := time.Now()
	return now.Truncate(every).Add(every).Sub(now)
}

// recheckEvery is the session's re-check interval: the poll interval when
// it polls, the option's otherwise.
func (s *session) recheckEvery() time.Duration {
	if s.polls() {
		return s.t.opts.pollInterval()
	}
	return s.t.opts.recheck
}

// touch notes that an event named path since the last resolution. A name
// on the way to the file (not the file itself, which in-place writes name)
// means the path may lead elsewhere now.
func (s *session) touch(path string) {
	if s.touched == nil {
		s.touched = make(map[string]bool)
	}
	s.touched[path] = true
	if s.view.names[path] && !slices.Contains(s.view.files, path) {
		s.chainTouched++
	}
}

// eventKind is what an event asks of a session. Events are only hints:
// which entry changed says whether and when to look again, never what
// changed. onEvent classifies each event, then acts on its kind.
type eventKind uint8

const (
	eventIgnored   eventKind = iota // about nothing the subject depends on, or nothing changed
	eventSetChange                  // a file of a set that may be rewritten file by file changed
	eventMade                       // an entry was created where the path leads: its creator may still be writing it
	eventMovedIn                    // an entry was renamed or linked in: complete as it arrives
	eventGone                       // the file itself went, and the path no longer shows it
	eventLook                       // something on the path's chain changed: look again now
	eventWrite                      // the file was written in place
	eventClosed                     // the writer a wait was for closed the file
)

// onEvent takes one event from the notifier.
func (s *session) onEvent(ev event) {
	if ev.has(opRescan) {
		s.eventsLost()
		return
	}
	name := filepath.Clean(ev.name)
	if !s.view.relevant(name) {
		return
	}
	s.touch(name)
	if ev.has(opRemove) && s.watched[name] {
		s.watchGone(name)
	}
	kind := s.classify(ev, name)
	if kind != eventIgnored && kind != eventClosed {
		// A writer's close is the word of that writer on that file: after
		// anything else happened there, it vouches for nothing.
		s.readNow = false
	}
	switch kind {
	case eventMade, eventMovedIn, eventGone, eventLook:
		s.restat = true
	}
	switch kind {
	case eventSetChange:
		s.settle.written(ReasonEvent, false)
	case eventMade:
		s.made(name)
	case eventMovedIn:
		s.settle.swapSeen()
		s.lookAgain = true
	case eventGone:
		s.fileGone()
	case eventLook:
		s.lookAgain = true
	case eventWrite:
		s.written(name)
	case eventClosed:
		s.settle.writerClosed()
		s.readNow = true // what the writer wrote is all there; if that is nothing, see emptyClosed
	}
}

// classify says what a relevant event asks for.
func (s *session) classify(ev event, name string) eventKind {
	closes := s.caps.closes && s.settle.window > 0
	switch {
	case !s.view.atomic && name != s.view.swap && s.settle.window > 0:
		// A set's files may be rewritten one by one: it is read once it
		// has settled, unless a kubelet swap updated all of them at once.
		if ev.has(opCreate|opRemove|opWrite) || s.sig == 0 || s.changedSinceRead() {
			return eventSetChange
		}
		return eventIgnored
	case ev.has(opMade) && closes:
		return eventMade
	case ev.has(opCreate) && !ev.has(opMade) && s.caps.closes:
		// Where creates and renames look alike, a create is only a look.
		return eventMovedIn
	case ev.has(opRemove) && !ev.has(opCreate) && slices.Contains(s.view.files, name):
		if s.asJudged() {
			return eventIgnored // see classifyTouch
		}
		if s.arrivalsTold() && s.changedSinceRead() {
			return eventGone
		}
		return eventLook
	case ev.has(opCreate | opRemove):
		return eventLook
	case ev.has(opWrite|opClose) && !s.ofFileRead(name):
		// Queued for a file the path led to before: its writer is not
		// this file's, nor its close the end of this file's writes.
		return s.classifyTouch(ev, name)
	case ev.has(opWrite):
		return eventWrite
	case ev.has(opClose) && (s.settle.state != settled || s.readNow):
		// The same close told again, by the file's own watch after its
		// directory's, leaves the read it asked for standing: nothing
		// happened in between.
		return eventClosed
	case ev.has(opClose | opAttrib):
		return s.classifyTouch(ev, name)
	}
	return eventIgnored
}

// ofFileRead reports whether an event on name is about the file the path
// leads to: one the last resolution found, or, where that resolution is
// stale by now (events taken in a batch, before the refresh they ask for),
// the file the path names now. An event under another name was queued for
// a file the path led to before (a symlink retargeted since, a directory
// made again): its writes and its writer's close say nothing of this file.
func (s *session) ofFileRead(name string) bool {
	if slices.Contains(s.view.files, name) {
		return true
	}
	info, err := os.Lstat(name)
	if err != nil || !info.Mode().IsRegular() {
		return false
	}
	for _, p := range s.t.subj.paths() {
		if cur, err := os.Stat(p); err == nil && sameFile(cur, info) {
			return true
		}
	}
	return false
}

// classifyTouch says what a close with no wait for it (the watch came after
// the write), a chmod, a touch, a link made or removed ask for: the file
// changed only if its stat did, or if it could not be read and perhaps now
// can. (Reading on every such event would let our own reads wake us,
// without end on a strictatime mount.)
func (s *session) classifyTouch(ev event, name string) eventKind {
	switch {
	case s.asJudged() && slices.Contains(s.view.files, name):
		// An event of the file, taken with the events queued at a read,
		// and the file is as that read found it: what the event tells of,
		// the read saw (the same close told again by the file's own watch
		// after its directory's; a file renamed over telling of its own
		// removal). Whether the read is believed is for its judgment to
		// say. (One of a directory on the way is no news of the file, but
		// may make that judgment read again: see noLaterWriter.)
		return eventIgnored
	case s.sig == 0:
		return eventLook // it could not be read; perhaps now it can
	case !s.changedSinceRead():
		return eventIgnored
	case ev.has(opAttrib) && s.arrivalsTold() && !s.readNow && s.replaced():
		// The link count dropping is the first the kernel says of a
		// removal, before the directory's event. (A touch of the file
		// still there reads at once.) Not while a writer's close asks
		// for a read: the path showed the file closed when the close was
		// taken, and a file put in its place since would have come with
		// an event of its own, which ends that ask. This is about the
		// file closed: its times or mode set (tar: create, write, close,
		// set times), or the first of its own removal, whose directory's
		// event follows and says so.
		return eventGone
	}
	return eventLook
}

// eventsLost takes the notifier's word that events were lost, a writer's
// close or another's writes perhaps among them: every watch is renewed and
// the file looked at again, from the root, as where no watch saw writers;
// no close taken before vouches for what is read, and a wait for a close
// becomes a wait for quiet.
func (s *session) eventsLost() {
	s.rewatchAll, s.lookAgain, s.readNow = true, true, false
	s.touchedAll, s.lookFresh = true, true // writers may have begun unseen
	s.settle.closeLost()
}

// watchGone forgets the watch of a path that was removed: the kernel drops
// the watch of a removed directory or file, and a moved one no longer
// watches the path. The path is watched afresh, even if it is back.
func (s *session) watchGone(name string) {
	s.n.Remove(name)
	delete(s.watched, name)
	s.dirsDirty = true
	if !slices.Contains(s.view.files, name) {
		// A directory moved away takes the watches below it along:
		// whatever takes its place, they watch the old tree.
		s.rewatchAll = true
		s.watchesGone++
	}
}

// fileGone takes the removal of the file itself, once the path no longer
// shows it (a rename-over read already leaves its old file's removal
// nothing to say). Whatever takes its place comes with an event of its
// own, read as that event says: a rename's at once, a creation's at its
// writer's close. Read now, on this event, it could be caught half-written
// (rm config.yaml; slow-producer > config.yaml); if nothing comes, the
// doubt's end reads it and reports it missing. A wait for writers that
// runs may be for the file that went: the path is resolved again, which
// ends it if so (see refresh), and reads nothing while it runs.
func (s *session) fileGone() {
	s.filesGone++
	s.settle.doubt(ReasonEvent)
	if s.settle.blocksReads() {
		s.lookAgain = true
	}
}

// written takes an in-place write of the file at name: it is read once the
// writes are done. Which file a wait for them is for is looked up when it
// begins, and again if the path may have moved since.
func (s *session) written(name string) {
	if s.settle.window == 0 {
		s.lookAgain = true
		return
	}
	if s.writing == nil || s.restat || !s.settle.blocksReads() {
		info, _ := os.Stat(name)
		s.waitFor(info)
	}
	s.writes++
	s.settle.written(ReasonWrite, s.caps.closes)
}

// waitFor notes the file a wait for writers begins for (nil: not known).
func (s *session) waitFor(info fs.FileInfo) {
	s.writing, s.restat, s.writingSeen = info, false, s.writes
}

// made decides how to read what was created where the path leads, not
// renamed there. A directory or a symlink is looked at at once. A regular
// file's creator may still be writing it (rm config.yaml; slow-producer >
// config.yaml). A file with nothing in it yet is read at its creator's
// close, however long the creator takes to start; one already written, at
// the close or after a quiet window (its writes, if any are still to come,
// turn that into a wait for the close). A hard link made there brings a
// file complete, as a rename does: read at once.
func (s *session) made(name string) {
	info, err := os.Lstat(name)
	switch {
	case err != nil || !info.Mode().IsRegular():
		s.lookAgain = true
	case linkCount(info) > 1:
		s.settle.swapSeen()
		s.lookAgain = true
	case info.Size() == 0 && s.caps.closes:
		s.waitFor(info)
		s.writes++
		s.settle.emptyWhileOpen(ReasonWrite)
	default:
		s.waitFor(info)
		s.writes++
		s.settle.written(ReasonWrite, s.caps.closes)
	}
}

// replaced reports whether the path no longer shows the file last read:
// it is missing, or another file is there. (The inode number alone cannot
// tell: a file created at once may be given the one just freed; its size
// most likely differs.)
func (s *session) replaced() bool {
	cur, one := s.fileNow()
	if s.info == nil || !one {
		return true
	}
	return cur == nil || !sameFile(cur, s.info) || cur.Size() != s.info.Size()
}

// fileNow stats the file the path leads to now: nil if there is none. one
// is false for a set, which has no one file.
func (s *session) fileNow() (info fs.FileInfo, one bool) {
	paths := s.t.subj.paths()
	if len(paths) != 1 {
		return nil, false
	}
	g := &s.glance
	if g.on && g.fileTaken {
		return g.file, true
	}
	info, err := os.Stat(paths[0])
	if err != nil {
		info = nil
	}
	if g.on {
		g.file, g.fileTaken = info, true
	}
	return info, true
}

// glance keeps, while noLaterWriter takes the events that were queued when
// it began, the stats taken for them. Each of those events happened before
// the first stat, so that one stat answers for all of them, and for
// whether the file read is still there once they are taken: a
// rename-over's three events on the old file (its link count, its
// deletion, its watch dropped) and that check would otherwise cost five
// stats on the way to the callback. Events that come while the queue is
// taken are judged by stats of their own, and so is the check after them.
// It keeps the stat of the read being judged as well: an event of the file
// that finds it as that read did tells of nothing the read did not see.
type glance struct {
	read      signature // the stat the read being judged took; zero if it failed
	on        bool      // the event being taken was queued when the taking began
	sig       signature
	sigTaken  bool
	file      fs.FileInfo
	fileTaken bool
}

// forget drops what was kept: a stat answers only for the events it was
// taken for.
func (g *glance) forget() { *g = glance{} }

// arrivalsTold reports whether a file that takes the watched file's place
// will be told of by an event of its own that says how it came: where the
// kernel tells a creation from a rename (and reports the creator's close),
// and the file's directory is watched. A file's own watch, standing in for
// a directory that cannot be listed, reports nothing of its successor.
func (s *session) arrivalsTold() bool {
	return s.caps.closes && s.settle.window > 0 && s.refused[s.view.home] == nil
}

// refresh re-resolves the path, re-reads, and watches what the path now
// depends on. It keeps the path to the delivery short: when the chain moved
// to a directory not watched yet (a kubelet update), it reads before adding
// the watch, then checks that the file did not change in between: a change
// after the Add comes as an event, one before it shows in the stat, and
// the file is looked at again as where no watch saw writers (which waits
// for one only if the file says it was written lately). Stale
// watches are removed, and the chain checked for having moved meanwhile,
// after the delivery too. After lost events it re-adds every watch, in case
// one was dropped unseen.
func (s *session) refresh(why Reason, t trust) error {
	if s.pollOnly() {
		s.read(why, t, false) // a poll session watches nothing
		return nil
	}
	all := s.rewatchAll
	s.rewatchAll = false
	if all {
		s.resolve()
	} else {
		s.resumeResolve()
	}
	if s.settle.blocksReads() && s.ledElsewhere() {
		// A wait for the writers of a file the path no longer leads to (a
		// rename brought another, the file went): their close may never
		// be told here. What is read now is judged afresh.
		s.settle.moved()
	}
	// What moved carries is for this refresh's read alone, whatever
	// path it takes out.
	defer s.settle.refreshDone()
	// Whatever an event or a wait said, it said nothing of writers in a
	// directory no watch covered: a close may even have been the last
	// file's, in a directory deleted since. A file the resolution did not
	// reach, but the read does, appeared since; one the last refresh
	// found only once its watches were added, was written unwatched; one
	// the resolution wants only now was written unheard.
	fresh := s.lookFresh || !s.watched[s.view.home] || len(s.view.files) == 0 || s.unheard()
	s.lookFresh = false
	switch {
	case t.endsWriterWait() && s.ledElsewhere():
		// The wait that ended was for the writer of a file the path no
		// longer leads to: what it says of that writer says nothing of
		// this file, which came where no event told of it (renamed in
		// before the watch that would have seen it was added). It is
		// judged as any file found where no watch heard its writer.
		t, fresh = doubtful, true
	case t == heldOpen && s.changedUnheard():
		// The wait ended taking its writer to hold the file open, but
		// the file changed with no write heard from it: no heard writer
		// is at work on what is there (its events were lost, or it is
		// another file that took the freed inode's number). It is read as
		// a quiet window's end: an empty file is doubted, not held for a
		// close, and the wait's cap still holds.
		t = quieted
	}
	s.read(why, t, fresh)
	// What to watch is worked out after the read, which it would only
	// delay: the read goes by the resolution.
	return s.watchAfterRead(all)
}

// watchAfterRead adds what the plan watches and is not watched (all of it
// if all), and removes what it no longer needs. Every read is followed by
// it: the read's judgment takes the events queued by then, and a watch the
// kernel dropped among them (the file's own, after a rename over it, the
// only one where its directory cannot be listed) is added again here, on
// whatever the path shows now. A change between the read and the Add
// shows in the stat, and is read again as where no watch saw writers. A
// poll session watches nothing.
func (s *session) watchAfterRead(all bool) error {
	if s.pollOnly() {
		return nil
	}
	if unwatched := s.unwatched(all); len(unwatched) > 0 {
		added, err := s.watch(unwatched)
		if vanished(err) || (err == nil && s.refused[s.view.home] != nil) {
			// A directory vanished under us, or the file's directory
			// refused a watch, which plans the one above: resolve until
			// still.
			err = s.watchChain(false)
		}
		if err != nil {
			return err
		}
		if added > 0 {
			switch v := s.t.subj.resolve(s.want, nil, nil); {
			case !v.same(&s.view):
				// The chain moved while the watches were added: look again,
				// at what no watch saw being written.
				s.lookAgain, s.lookFresh = true, true
				s.touchedAll = true // no event says where
			case s.writtenSinceRead():
				// The file changed where no watch saw it: a writer may be
				// at work there, unseen. Its writes from now on come as
				// events; look again as where no watch saw writers, which
				// waits for one only if the file says it was written
				// lately (a kubelet payload older than its ..data link
				// was not).
				s.lookAgain, s.lookFresh = true, true
			}
		}
	}
	s.unwatchStale()
	return nil
}

// changedSinceRead reports whether the subject's stat differs from the
// one taken by the last read.
func (s *session) changedSinceRead() bool {
	return s.statNow() != s.sig
}

// asJudged reports whether a read is being judged (see noLaterWriter) and
// the subject's stat is the one that read took.
func (s *session) asJudged() bool {
	return s.glance.read != 0 && s.statNow() == s.glance.read
}

// statNow is the subject's stat: the glance's, while one is kept.
func (s *session) statNow() signature {
	g := &s.glance
	if !g.on {
		return s.t.subj.stat()
	}
	if !g.sigTaken {
		g.sig, g.sigTaken = s.t.subj.stat(), true
	}
	return g.sig
}

// writtenSinceRead reports whether the subject is there and its stat
// differs from the one the last read made took, believed or not: what
// that read found was judged then (a later writer it knew of is waited
// for). A file that is not there has no writer to wait for: its return
// comes as events, now watched for, and a wait for quiet would only hold
// back the read they ask for.
func (s *session) writtenSinceRead() bool {
	st := s.t.subj.stat()
	return st != 0 && st != s.readSig
}

// look is the periodic re-check, the safety net, and Recheck's look now.
// The re-check costs a stat when nothing changed; otherwise, and always
// when forced, it re-adds every watch (in case one was lost without an
// event) and reads: at once if the stat is as the last read left it (a
// forced look may know what the stat cannot show, such as a filesystem
// caching it), once writes have had a quiet window to finish if not.
func (s *session) look(why Reason, force bool) error {
	st := s.t.subj.stat()
	unchanged := st != 0 && st == s.sig
	if unchanged && !force {
		return nil
	}
	if err := s.watchChain(true); err != nil {
		return err
	}
	switch {
	case unchanged:
		s.read(why, doubtful, false)
		return s.watchAfterRead(false)
	case s.settle.window > 0 && st != 0:
		// Without events, nothing says whether a writer is done: give it a
		// window.
		if !s.settle.blocksReads() {
			s.waitFor(nil) // no event names the file written
		}
		s.settle.guess(why)
	default:
		s.read(why, believed, false)
		return s.watchAfterRead(false)
	}
	return nil
}

// resolve resolves the subject, wanting each name before it is looked up.
func (s *session) resolve() {
	var want func(string)
	if s.n != nil {
		want = s.want
	}
	s.anew = s.anew[:0]
	s.view = s.t.subj.resolve(want, nil, nil)
	clear(s.touched)
	s.touchedAll = false
}

// resumeResolve resolves the subject again from the first name an event
// named since the last resolution: what comes before it cannot have
// changed, or an event would have said so. Every name the resolution looks
// up is watched (and wanted) for events on it, through its directory.
func (s *session) resumeResolve() {
	if s.touchedAll || s.n == nil {
		s.resolve()
		return
	}
	prev := s.view
	s.anew = s.anew[:0]
	s.view = s.t.subj.resolve(s.want, &prev, func(p string) bool { return s.touched[p] })
	clear(s.touched)
}

// want asks the notifier for the events that name path, unless it has
// already: the notifier takes the hub's lock for it, which its backend
// holds while it hands on events, and a kubelet update's own events would
// hold up every name of the path looked up again after it.
func (s *session) want(path string) {
	if !s.wanted[path] {
		s.wanted[path] = true
		s.anew = append(s.anew, path)
		s.n.Want(path)
	}
}

// ledElsewhere reports whether the path, one file's, leads now to another
// file than the one a wait for writers is for, or to none. Not known is not
// elsewhere.
func (s *session) ledElsewhere() bool {
	if s.view.chain == nil || s.writing == nil {
		return false // a set's resolution names no file
	}
	return s.view.file == nil || !sameFile(s.writing, s.view.file)
}

// changedUnheard reports whether the file a wait for writers is for, by
// device and inode number, now differs in size or modification time with
// no write heard since the wait began: a change no event told of (the
// watch was not in place, or its events were lost), or another file, made
// in its place at once and given the freed inode's number. A wait begun by
// a write event never answers yes: writingSeen is taken before that write
// is counted.
func (s *session) changedUnheard() bool {
	w := s.writing
	if w == nil || s.writes != s.writingSeen {
		return false
	}
	f, one := s.fileNow() // the resolution is the last one if no event named the path
	if !one || f == nil {
		return false
	}
	return f.Size() != w.Size() || !f.ModTime().Equal(w.ModTime())
}

// unheard reports whether a file the last resolution led to was not wanted
// before it (a symlink retargeted to a file in a directory watched
// already): events on it went to no one until then, a writer's among them.
func (s *session) unheard() bool {
	return slices.ContainsFunc(s.view.files, func(f string) bool { return slices.Contains(s.anew, f) })
}

// watchChain resolves the path and makes the notifier watch exactly what
// the resolution depends on (all of it again if all), resolving again until
// the chain holds still: a path being rebuilt one directory at a time needs
// one round per level. Watches are added before the file is read, so a
// change is either seen by the read or reported by an event. A poll
// session has nothing to watch.
func (s *session) watchChain(all bool) error {
	if s.pollOnly() {
		return nil
	}
	var err error
	for range maxWatchRounds {
		s.resolve()
		var added int
		added, err = s.watch(s.unwatched(all))
		all = false
		if err == nil && added == 0 {
			break
		}
		if err != nil && !vanished(err) {
			return err
		}
		// Watches were added, or a path vanished as they were: the
		// resolution may already be stale.
	}
	s.unwatchStale()
	if err != nil {
		return err
	}
	return s.blind()
}

// plan lists what the session watches for the current chain: the
// directories it depends on (chain.Dirs), and where the notifier can afford
// them, every other directory the resolution went through (a plain
// ancestor renamed or exchanged moves the path) and the file itself (a
// write through another of its names, a hard link or the source of a bind
// mount, is reported only there).
func (s *session) plan() []string {
	paths := slices.Clone(s.view.dirs)
	if home := s.view.home; s.refused[home] != nil && !slices.Contains(paths, filepath.Dir(home)) {
		// The file's directory cannot be watched: the one above reports
		// it made enterable, replaced or removed.
		paths = append(paths, filepath.Dir(home))
	}
	if s.caps.ancestors {
		for _, d := range s.view.searched {
			if !slices.Contains(paths, d) {
				paths = append(paths, d)
			}
		}
	}
	if s.caps.files {
		for _, f := range s.view.files {
			if !slices.Contains(paths, f) {
				paths = append(paths, f)
			}
		}
	}
	return paths
}

// unwatched lists what the plan watches that is not watched yet (all of it
// if all).
func (s *session) unwatched(all bool) []string {
	var paths []string
	for _, p := range s.plan() {
		if all || !s.watched[p] {
			paths = append(paths, p)
		}
	}
	return paths
}

// watch adds watches on paths and returns how many it added. Not for a
// poll session. A watch refused for want of permission (a directory the
// process may traverse but not list, mode 0711, or not enter, 0700) is done
// without, as long as another stands in for it (see blind). So is a watch
// beyond chain.Dirs that the kernel has no room for. Any other failure ends
// the session, unless the path vanished, which the caller handles by
// resolving again.
func (s *session) watch(paths []string) (added int, err error) {
	for _, p := range paths {
		err := s.n.Add(p)
		switch {
		case err == nil:
			s.watched[p] = true
			delete(s.refused, p)
			s.dirsDirty = true
			added++
		case vanished(err):
			return added, fmt.Errorf("add watch on %s: %w", p, err)
		case refused(err), limited(err) && !slices.Contains(s.view.dirs, p):
			s.refused[p] = err
		default:
			return added, fmt.Errorf("add watch on %s: %w", p, err)
		}
	}
	return added, nil
}

// blind returns why no event would tell of a change, if none would: the
// file's directory refused a watch (the process may traverse it but not
// list it, or may not enter it at all), and neither the file's own watch
// stands in for it, nor, while the file cannot be reached, the watch of the
// directory above, which reports the directory made enterable. The session
// then ends, to poll.
func (s *session) blind() error {
	home := s.view.home
	why := s.refused[home]
	switch {
	case why == nil:
		return nil
	case slices.ContainsFunc(s.view.files, func(f string) bool { return s.watched[f] }):
		return nil
	case len(s.view.files) == 0 && s.watched[filepath.Dir(home)]:
		return nil
	}
	return fmt.Errorf("add watch on %s: %w", home, why)
}

// vanished reports whether an Add failed because the path no longer leads
// where it did.
func vanished(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

// refused reports whether an Add failed for want of permission.
func refused(err error) bool {
	return errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.EPERM)
}

// limited reports whether an Add failed on a kernel limit.
func limited(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE)
}

// unwatchStale removes the watches, and forgets the names, the chain no
// longer needs, and tells the sink what is watched now. Not for a poll
// session.
func (s *session) unwatchStale() {
	keep := s.view.want()
	s.n.Forget(keep)
	for p := range s.wanted {
		if !keep[p] {
			delete(s.wanted, p)
		}
	}
	plan := s.plan()
	for p := range s.watched {
		if !slices.Contains(plan, p) {
			delete(s.watched, p)
			s.dirsDirty = true
			s.n.Remove(p)
		}
	}
	for p := range s.refused {
		if !slices.Contains(plan, p) {
			delete(s.refused, p)
		}
	}
	s.tellWatching()
}

// tellWatching tells the sink, once it has one, what is watched now, if
// that changed since it was last told.
func (s *session) tellWatching() {
	if s.dirsDirty && s.out != nil {
		s.dirsDirty = false
		s.out.watching(s.mode(), s.watchedDirs())
	}
}

// read re-reads the file and offers what it finds, unless in-place writes
// are under way and this read does not end the wait for them.
func (s *session) read(why Reason, t trust, fresh bool) {
	if s.settle.blocksReads() && (t == doubtful || t == closedByWriter) {
		return // the wait's end, or the later writer's close, reads
	}
	var via *sight
	if !s.pollOnly() {
		via = &s.view // resolved just before
	}
	r := s.t.subj.read(why, via)
	if via != nil && via.file != nil && r.err == nil && !sameFile(r.c.info, via.file) {
		// The path led to another file by the time it was read than the
		// resolution just made found (a link put in its place): one no
		// watch may have covered while it was written.
		fresh = true
	}
	s.readSig = r.c.sig
	s.offer(r, t, fresh)
}

// offer hands a read to the sink, as far as t says it is to be believed. A
// missing or empty file that an event's read found is doubted rather than
// believed: either is far more often the middle of an update (a
// remove-then-create swap, a file created before it is written) than its
// end. It is handed on only if it lasts a quiet window, and any event in
// between reads again at once. A file that a writer holding it open has
// left empty is not believed before its close, nor one its writer's close
// left empty before no writer has appeared for a while (heldOpenWindow).
// What a writer's close reads is handed on only if no later writer had
// begun by then. A read that failed for a reason of the process, not of
// the file, is told of and retried.
//
// A fresh read was made where no watch told of writers until now (see
// refresh): a file it finds written lately is given a window, as one that
// an event read is where no close will be reported.
func (s *session) offer(r reading, t trust, fresh bool) {
	if processError(r.err) {
		s.retry.later(r.why, t, fresh)
		s.out.found(r)
		return
	}
	s.retry.done()
	waits := s.settle.window > 0
	doubted := s.t.subj.doubtful(r) && waits
	lately := func(d time.Duration) bool { return waits && r.err == nil && s.writtenWithin(&r.c, d) }
	switch {
	case t == heldOpen && doubted && r.err == nil:
		s.waitFor(r.c.info)
		s.settle.emptyWhileOpen(r.why)
		return
	case (t == doubtful || t == heldOpen || (t == quieted || t == capped) && r.err == nil) && doubted:
		// A cap's read, too: the file it finds empty is most likely a
		// writer's truncation, caught because writes went on for so long.
		s.settle.doubt(r.why)
		return
	case r.err == nil && r.c.torn && waits:
		// A writer truncated the file as it was read: wait for it, as for
		// one no event told of (its event may not have come yet). Even at
		// a cap: what was read is a part, and the writer is at it now.
		s.awaitUnseenWriter(r.why, r.c.info)
		return
	case t == capped:
	case (t == believed || t == quieted) && lately(s.settle.window), t == heldOpen && lately(s.writerPause()):
		// The wait was quiet only because the writes' events had not come
		// yet: the file says it was written within it. A file found empty
		// so is given a quiet window, not a wait for its writer's close:
		// nothing says one holds it open (a rename may have brought it, or
		// a read before took its writer's close), and a close that never
		// comes would hold it back for maxWriterWait.
		s.waitFor(r.c.info)
		s.settle.resume(s.caps.closes && !doubted)
		return
	case (fresh || t == doubtful && !s.caps.closes && r.why != ReasonStart) && lately(s.writerPause()):
		// A writer no event told of, or whose close no event will tell
		// of, may still be at it: it is given the pause a writer that
		// keeps the file open gets. (The read that starts a watch is its
		// baseline, whatever it finds.) An empty file is doubted instead:
		// its writer, if one holds it open, is heard from now on (its
		// writes, its close), and nothing says one does.
		if doubted {
			s.settle.doubt(r.why)
			return
		}
		s.awaitUnseenWriter(r.why, r.c.info)
		return
	case waits && !s.noLaterWriter(r):
		return // the later writer's close, or its quiet, reads
	case t == closedByWriter && doubted && r.err == nil:
		// A writer's close that leaves the file empty, no later writer
		// known yet: most often the file was emptied to be written
		// again (truncate, then append), and the next writer has yet to
		// begin. It is doubted until no writer has appeared for a
		// while (settle.emptyClosed).
		s.settle.emptyClosed(r.why)
		return
	}
	s.settle.believed()
	s.heldBack = time.Time{} // a read believed ends the holding back, however it was made (a cap's)
	s.sig, s.info = r.c.sig, r.c.info
	s.out.found(r)
}

// writerPause is how long a writer no event told of must pause before what
// it wrote is read with no close to say it is done, and how lately a file
// found at the end of a writer's wait must have been written for the wait
// to go on: unheardWriterPause where closes are reported (or the window, if
// shorter), the quiet window elsewhere. (A writer heard writing is given
// heldOpenWindow: see settle.pause.)
func (s *session) writerPause() time.Duration {
	if s.caps.closes {
		return min(s.settle.window, unheardWriterPause)
	}
	return s.settle.window
}

// awaitUnseenWriter waits for a writer that may be at work where no event
// told of it: where closes are reported, as for a writer that keeps the
// file open (its close, or its pause, reads); elsewhere, a quiet window,
// which an event showing a swap ends. info is the file it may be at work
// on.
func (s *session) awaitUnseenWriter(why Reason, info fs.FileInfo) {
	s.waitFor(info)
	if s.caps.closes {
		s.settle.unheardWriter(why)
		return
	}
	s.settle.guess(why)
}

// writtenWithin reports whether c was written so lately that a writer may
// still be at it: within the last d and, in a kubelet volume, after its
// payload was swapped in (kubelet writes a payload whole, then swaps it
// in; a write after that is someone editing it in place). A file found
// complete, its writer long gone, as a symlink retargeted to a release
// deployed before, is read at once; so is one edited in place long ago,
// which a wait would find no older each time it ends.
func (s *session) writtenWithin(c *content, d time.Duration) bool {
	if age := time.Since(c.mtime); age >= d || age <= -d {
		return false
	}
	if c.vol != "" {
		swapped := c.swapped
		if swapped.IsZero() {
			link, err := os.Lstat(filepath.Join(c.vol, dataLink))
			if err != nil {
				return false
			}
			swapped = link.ModTime()
		}
		return c.mtime.After(swapped)
	}
	return true
}

// noLaterWriter reports whether no writer is known to have begun writing
// by the time a read was made. What an event or a writer's close said was
// whole may not be by the time it is read: the next writer may have
// truncated the file (two os.WriteFile calls in a row, a rename-over and
// then an edit in place), and the read may have found its work half done.
// Every event the kernel queued until now is taken first, so that such a
// writer's first write is known; for a read that found the file empty, once
// a truncation under way has queued its event too (see awaitTruncation).
// The read is then left to that writer's close, or its quiet.
//
// Writers that never let up would leave every read to the next: once they
// have held reads back for maxWaitFactor windows, what is read stands.
func (s *session) noLaterWriter(r reading) bool {
	if s.n == nil {
		return true // polling: no events to tell of a writer
	}
	if r.err == nil && r.c.size() == 0 {
		for _, p := range s.t.subj.paths() {
			awaitTruncation(p)
		}
	}
	s.n.Sync()
	writes, gone, moved, removed := s.writes, s.watchesGone, s.chainTouched, s.filesGone
	lost := false
	queued := len(s.n.Events()) // see glance
	s.glance.read = r.c.sig
	defer s.glance.forget()
	for drained := false; !drained; {
		select {
		case ev, ok := <-s.n.Events():
			if !ok {
				return false // the loop sees the channel closed
			}
			s.glance.on = queued > 0
			queued--
			s.onEvent(ev)
			lost = lost || ev.has(opRescan) // a write may have been lost with it
		default:
			drained = true
			// If events came while the queue was taken, the stats kept
			// are older than some of them: readGone takes its own.
			s.glance.on = queued == 0
		}
	}
	// A watch that went since may have been the one to tell of a writer
	// where the read was made (a directory deleted and made again, and
	// written in at once): the read is made again, from what is watched.
	lost = lost || s.watchesGone != gone
	// A name on the way that changed since the resolution the read went
	// by: the read may have found a file elsewhere than where the watches
	// are. It is made again, by a new resolution.
	lost = lost || s.chainTouched != moved
	if s.watchesGone != gone || s.chainTouched != moved {
		// Made again as where no watch heard the writers: the watches in
		// place by then may have come after them. Made again whatever the
		// events said of themselves: a touch of a directory on the way
		// asks for nothing, yet the read it makes doubtful is not believed.
		s.lookAgain, s.lookFresh = true, true
	}
	// The file read was removed since (not the one a rename put it in
	// place of, whose removal comes after it): the doubt its removal began
	// is not for this read to end, and its end reads again.
	lost = lost || s.filesGone != removed && s.readGone(&r)
	if s.writes == writes && !lost {
		s.heldBack = time.Time{}
		return true
	}
	if s.heldBack.IsZero() {
		s.heldBack = time.Now()
	}
	return time.Since(s.heldBack) >= maxWaitFactor*s.settle.window
}

// readGone reports whether the path no longer shows the file r read. A
// set's read is taken to be there.
func (s *session) readGone(r *reading) bool {
	cur, one := s.fileNow()
	if r.c.info == nil || !one {
		return false
	}
	return cur == nil || !sameFile(cur, r.c.info)
}

// close releases the session's timers and notifier. A notifier's close
// error only says it was already broken; the session is over either way.
func (s *session) close() {
	s.settle.stop()
	s.retry.done()
	if s.tryEvents != nil {
		s.tryEvents.Stop()
	}
	if s.n == nil {
		return
	}
	if err := s.n.Close(); err != nil {
		s.t.opts.log().Debug("keepwatch: closing notifier", slog.String("path", s.t.path), slog.Any("error", err))
	}
}
