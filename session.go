package file

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/keepwatch/file/internal/chain"
)

// maxWatchRounds bounds how often watchChain re-resolves a chain that keeps
// changing while watches are being added; events bring it back if it gives
// up.
const maxWatchRounds = 8

// eventRetryInterval is how often a session that polls because events
// failed ends, so that events are tried again.
const eventRetryInterval = 30 * time.Second

// sink takes what a session finds. The supervisor is the sink of the
// sessions it runs.
type sink interface {
	// found takes a read the session believes: not one taken while the file
	// was being written, nor a missing or empty file that may be the middle
	// of an update.
	found(r reading)
	// watchingDirs takes the directories the session watches now, sorted.
	watchingDirs(dirs []string)
}

// session is one run of a watch: a notifier watching the directories the
// path's current resolution depends on. It re-resolves and re-reads on
// every relevant event, and hands what it reads to its sink. It knows
// nothing of the provider or the callback; it ends when its notifier fails
// or its context is done.
//
// A session without a notifier polls: it re-reads at the poll interval.
type session struct {
	t       target
	n       notifier // nil for a poll session
	sink    sink     // set by run
	chain   chain.Chain
	watched map[string]bool // directories the notifier watches
	sig     fs.FileInfo     // fstat of the last read believed, nil if it failed

	lookAgain  bool   // a relevant event asks to resolve and read again
	rewatchAll bool   // events were lost: re-add every watch too
	dirsDirty  bool   // watched changed since the sink was last told
	settle     settle // the wait for the file to settle, if any

	remoteFS  string      // the file's filesystem delivers no events for remote changes
	tryEvents *time.Timer // ends a poll session that stands in for events
}

// openSession creates a notifier and makes it watch what the path depends
// on.
func openSession(t target) (*session, error) {
	n, err := t.opts.newNotifier()
	if err != nil {
		return nil, err
	}
	s := newSession(t, n)
	if err := s.watchChain(false); err != nil {
		s.close()
		return nil, err
	}
	if name, none := t.opts.fsType(s.chain.Home()); none {
		s.remoteFS = name
	}
	return s, nil
}

// newPollSession makes a session that polls. A fallback, standing in for
// events that failed, ends after eventRetryInterval so that they are tried
// again.
func newPollSession(t target, fallback bool) *session {
	s := newSession(t, nil)
	if fallback {
		s.tryEvents = time.NewTimer(eventRetryInterval)
	}
	return s
}

func newSession(t target, n notifier) *session {
	return &session{t: t, n: n, watched: make(map[string]bool), settle: settle{window: t.opts.quiet}}
}

// pollOnly reports whether this is a poll session: it has no notifier.
func (s *session) pollOnly() bool { return s.n == nil }

// polls reports whether the session re-reads at the poll interval: it is
// a poll session, or its file is on a filesystem that reports no events
// for remote changes.
func (s *session) polls() bool { return s.pollOnly() || s.remoteFS != "" }

// remote names the filesystem that reports no events for remote changes,
// if the file is on one.
func (s *session) remote() string { return s.remoteFS }

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
	return slices.Sorted(maps.Keys(s.watched))
}

// run hands first, the read made when the session was opened, to sink, then
// handles events until the session fails or ctx is done; it returns nil
// only in the latter case.
func (s *session) run(ctx context.Context, sink sink, first reading) error {
	s.sink = sink
	s.dirsDirty = false // the supervisor recorded them when it started the session
	s.offer(first, false)
	return s.loop(ctx)
}

func (s *session) loop(ctx context.Context) error {
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
	var tryEvents <-chan time.Time
	if s.tryEvents != nil {
		tryEvents = s.tryEvents.C
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tryEvents:
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
			if err := s.refresh(s.settle.fired(), true); err != nil {
				return err
			}
		case <-tick:
			recheck.Reset(untilTick(every))
			if err := s.recheck(); err != nil {
				return err
			}
		}
		// A refresh can itself ask for another: the chain moved while its
		// watches were being added. Nothing else would wake the loop for it.
		for s.lookAgain {
			s.lookAgain = false
			if err := s.refresh(reasonEvent, false); err != nil {
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

// onEvent decides what an event asks for. Events are only hints: which
// directory entry changed says whether to look again, never what changed.
func (s *session) onEvent(ev event) {
	if ev.has(opLost) {
		s.rewatchAll, s.lookAgain = true, true
		return
	}
	name := filepath.Clean(ev.name)
	if !s.chain.Relevant(name) {
		return
	}
	if ev.op == opAttrib && s.sig != nil {
		// A touch, a chmod or a read's atime update: the content of a file
		// that reads fine cannot have changed. (Acting on it would let our
		// own reads wake us, without end on a strictatime mount.) If the
		// last read failed, a chmod may have made the file readable.
		return
	}
	if s.watched[name] && ev.has(opRemove) {
		// The kernel drops the watch of a removed or renamed directory;
		// the next watchChain must add it again, even if the path is back.
		delete(s.watched, name)
		s.dirsDirty = true
	}
	if ev.has(opWrite) && s.settle.window > 0 {
		s.settle.writing(reasonWrite)
		return
	}
	s.lookAgain = true
}

// refresh re-resolves the path, re-reads, and watches what the path now
// depends on. It keeps the path to the delivery short: when the chain moved
// to a directory not watched yet (a kubelet update), it reads before adding
// the watch, then checks that the file did not change in between: a change
// after the Add comes as an event, one before it shows in the stat. Stale
// watches are removed, and the chain checked for having moved meanwhile,
// after the delivery too. After lost events it re-adds every watch, in case
// one was dropped unseen.
func (s *session) refresh(why reason, settled bool) error {
	if s.n == nil {
		s.read(why, settled) // a poll session watches nothing
		return nil
	}
	all := s.rewatchAll
	s.rewatchAll = false
	s.resolve()
	unwatched := s.unwatched(all)
	s.read(why, settled)
	if len(unwatched) > 0 {
		err := s.watch(unwatched)
		if errors.Is(err, fs.ErrNotExist) {
			err = s.watchChain(false) // a directory vanished under us: resolve until still
		}
		if err != nil {
			return err
		}
		if c := chain.Resolve(s.t.abs, s.n.Want); !c.Same(&s.chain) || s.changedSinceRead() {
			s.lookAgain = true
		}
	}
	s.unwatchStale()
	return nil
}

// changedSinceRead reports whether the file's stat differs from the one
// taken by the last read.
func (s *session) changedSinceRead() bool {
	info, err := os.Stat(s.t.abs)
	if err != nil || s.sig == nil {
		return (err == nil) != (s.sig != nil)
	}
	return !sameStat(info, s.sig)
}

// recheck is the periodic safety net. It costs one stat when nothing
// changed; otherwise it re-adds every watch (in case one was lost without an
// event) and reads once writes have had a quiet window to finish.
func (s *session) recheck() error {
	info, statErr := os.Stat(s.t.abs)
	if statErr == nil && s.sig != nil && sameStat(info, s.sig) {
		return nil
	}
	if err := s.watchChain(true); err != nil {
		return err
	}
	if s.settle.window > 0 && statErr == nil {
		// Without events, nothing says whether a writer is done: give it a
		// window. A wait already running is not extended: the stat differs
		// from the last read until the wait ends and reads, so extending
		// would put every polled update off to the wait's cap.
		if !s.settle.blocksReads() {
			s.settle.writing(reasonRecheck)
		}
		return nil
	}
	s.read(reasonRecheck, true)
	return nil
}

// resolve resolves the path, wanting each name before it is looked up.
func (s *session) resolve() {
	var want func(string)
	if s.n != nil {
		want = s.n.Want
	}
	s.chain = chain.Resolve(s.t.abs, want)
}

// watchChain resolves the path and makes the notifier watch exactly the
// directories the resolution depends on (all of them again if all),
// resolving again until the chain holds still: a path being rebuilt one
// directory at a time needs one round per level. Watches are added before
// the file is read, so a change is either seen by the read or reported by
// an event. A poll session has nothing to watch.
func (s *session) watchChain(all bool) error {
	if s.n == nil {
		return nil
	}
	var err error
	for range maxWatchRounds {
		s.resolve()
		unwatched := s.unwatched(all)
		all = false
		err = s.watch(unwatched)
		if err == nil && len(unwatched) == 0 {
			break
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		// Watches were added, or a directory vanished as they were: the
		// resolution may already be stale.
	}
	s.unwatchStale()
	return err
}

// unwatched lists the directories of the chain not watched yet (all of
// them if all).
func (s *session) unwatched(all bool) []string {
	var dirs []string
	for _, d := range s.chain.Dirs {
		if all || !s.watched[d] {
			dirs = append(dirs, d)
		}
	}
	return dirs
}

// watch adds watches on dirs. Not for a poll session.
func (s *session) watch(dirs []string) error {
	for _, d := range dirs {
		if err := s.n.Add(d); err != nil {
			return fmt.Errorf("add watch on %s: %w", d, err)
		}
		s.watched[d] = true
		s.dirsDirty = true
	}
	return nil
}

// unwatchStale removes the watches, and forgets the names, the chain no
// longer needs, and tells the sink what is watched now. Not for a poll
// session.
func (s *session) unwatchStale() {
	s.n.Forget(s.chain.Names)
	for d := range s.watched {
		if !slices.Contains(s.chain.Dirs, d) {
			delete(s.watched, d)
			s.dirsDirty = true
			s.n.Remove(d)
		}
	}
	s.tellWatching()
}

// tellWatching tells the sink, once it has one, what is watched now, if
// that changed since it was last told.
func (s *session) tellWatching() {
	if s.dirsDirty && s.sink != nil {
		s.dirsDirty = false
		s.sink.watchingDirs(s.watchedDirs())
	}
}

// read re-reads the file and offers what it finds, unless in-place writes
// are under way and this is not the end of the wait for them.
func (s *session) read(why reason, settled bool) {
	if s.settle.blocksReads() && !settled {
		return // the window's end reads
	}
	s.offer(s.t.read(why), settled)
}

// offer hands a read to the sink. Unless settled, a missing or empty file
// is doubted rather than believed: either is far more often the middle of
// an update (a remove-then-create swap, a file created before it is
// written) than its end. It is handed on only if it lasts a quiet window,
// and any event in between reads again at once.
func (s *session) offer(r reading, settled bool) {
	doubtful := errors.Is(r.err, fs.ErrNotExist) || (r.err == nil && len(r.c.data) == 0)
	if doubtful && !settled && s.settle.window > 0 {
		s.settle.doubt(r.why)
		return
	}
	s.settle.clearDoubt()
	s.sig = r.c.info
	s.sink.found(r)
}

// close releases the session's timers and notifier. A notifier's close
// error only says it was already broken; the session is over either way.
func (s *session) close() {
	s.settle.stop()
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

// sameStat reports whether two stats of the file look alike, in which case
// the re-check skips the read.
func sameStat(a, b fs.FileInfo) bool {
	return os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}
