package file

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/fsnotify/fsnotify"
)

// maxArmRounds bounds how often arm re-resolves a chain that keeps changing
// while watches are being added; events bring it back if it gives up.
const maxArmRounds = 8

// Causes that end a session, besides the notifier's own errors.
var (
	errEventsClosed = errors.New("keepwatch: event channel closed")
	errErrorsClosed = errors.New("keepwatch: error channel closed")
	errRetryEvents  = errors.New("keepwatch: time to try events again")
)

// reason says why the file is read. It goes to the logger with each delivery.
type reason string

const (
	reasonStart   reason = "start"   // the watch began
	reasonRestart reason = "restart" // the watch was re-armed after a failure
	reasonEvent   reason = "event"   // a filesystem event on the path's chain
	reasonWrite   reason = "write"   // in-place writes went quiet
	reasonRecheck reason = "recheck" // the periodic re-check saw a change
)

// session is one armed watch: a notifier watching the directories the path's
// current resolution depends on. It re-resolves and re-reads on every
// relevant event, and ends when the notifier fails or the watch stops.
type session struct {
	f     *File
	w     *watch // the watch running the session, set by run
	n     notifier
	chain chain           // the path's resolution as of the last arm
	armed map[string]bool // directories the notifier watches
	sig   fs.FileInfo     // fstat of the last successful read, nil if it failed

	pending     bool   // a relevant event asks for a read
	dirsChanged bool   // armed changed since Stats last saw it
	rescan      bool   // events were lost: re-add every watch too
	settle      settle // the wait for the file to settle, if any

	polling bool        // no events: n is noEvents, and the re-check polls
	remote  string      // the file's filesystem delivers no events for remote changes
	retry   *time.Timer // ends a fallback polling session, to try events again
}

func newSession(f *File, n notifier) *session {
	return &session{f: f, n: n, armed: make(map[string]bool), settle: settle{window: f.opts.quiet}}
}

// openSession creates a notifier and makes it watch what the path depends on.
func openSession(f *File) (*session, error) {
	n, err := f.opts.newNotifier()
	if err != nil {
		return nil, err
	}
	s := newSession(f, n)
	if err := s.arm(false); err != nil {
		s.close()
		return nil, err
	}
	if name, none := f.opts.fsType(s.chain.home()); none {
		s.remote = name
	}
	return s, nil
}

// run delivers the read made when the session was armed, then handles
// events until the session fails or the watch stops; it returns nil only in
// the latter case.
func (s *session) run(w *watch, why reason, c content, err error) error {
	s.w = w
	s.consider(why, c, err, false)
	return s.loop()
}

func (s *session) loop() error {
	var (
		tick    <-chan time.Time
		recheck *time.Timer
		every   = s.recheckEvery()
	)
	if every > 0 {
		recheck = time.NewTimer(untilTick(every))
		defer recheck.Stop()
		tick = recheck.C
	}
	var retry <-chan time.Time
	if s.retry != nil {
		retry = s.retry.C
	}
	for {
		select {
		case <-s.w.ctx.Done():
			return nil
		case <-retry:
			return errRetryEvents
		case ev, ok := <-s.n.Events():
			if !ok {
				return errEventsClosed
			}
			s.onEvent(ev)
		case err, ok := <-s.n.Errors():
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
		for s.pending {
			s.pending = false
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
// it has no events, or none for remote changes; the option's otherwise.
func (s *session) recheckEvery() time.Duration {
	if s.polling || s.remote != "" {
		return s.f.opts.pollInterval()
	}
	return s.f.opts.recheck
}

// onEvent decides what an event asks for. Events are only hints: which
// directory entry changed says whether to look again, never what changed.
func (s *session) onEvent(ev fsnotify.Event) {
	if ev.Name == lostEvent.Name {
		s.rescan, s.pending = true, true
		return
	}
	name := filepath.Clean(ev.Name)
	if !s.chain.relevant(name) {
		return
	}
	if ev.Op == fsnotify.Chmod && s.sig != nil {
		// A touch, a chmod or a read's atime update: the content of a file
		// that reads fine cannot have changed. (Acting on it would let our
		// own reads wake us, without end on a strictatime mount.) If the
		// last read failed, a chmod may have made the file readable.
		return
	}
	if s.armed[name] && ev.Has(fsnotify.Remove|fsnotify.Rename) {
		// The kernel drops the watch of a removed or renamed directory;
		// the next arm must add it again, even if the path is back.
		delete(s.armed, name)
		s.dirsChanged = true
	}
	if ev.Has(fsnotify.Write) && s.settle.window > 0 {
		s.settle.writing(reasonWrite)
		return
	}
	s.pending = true
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
	force := s.rescan
	s.rescan = false
	s.chain = resolve(s.f.abs, s.n.Want)
	missing := s.missing(force)
	s.read(why, settled)
	if len(missing) > 0 {
		err := s.add(missing)
		if errors.Is(err, fs.ErrNotExist) {
			err = s.arm(false) // a directory vanished under us: resolve until still
		}
		if err != nil {
			return err
		}
		if c := resolve(s.f.abs, s.n.Want); !c.same(&s.chain) || s.changedSinceRead() {
			s.pending = true
		}
	}
	s.prune()
	return nil
}

// changedSinceRead reports whether the file's stat differs from the one
// taken by the last read.
func (s *session) changedSinceRead() bool {
	info, err := os.Stat(s.f.abs)
	if err != nil || s.sig == nil {
		return (err == nil) != (s.sig != nil)
	}
	return !sameStat(info, s.sig)
}

// recheck is the periodic safety net. It costs one stat when nothing
// changed; otherwise it re-adds every watch (in case one was lost without an
// event) and reads once writes have had a quiet window to finish.
func (s *session) recheck() error {
	info, statErr := os.Stat(s.f.abs)
	if statErr == nil && s.sig != nil && sameStat(info, s.sig) {
		return nil
	}
	if err := s.arm(true); err != nil {
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

// arm resolves the path and makes the notifier watch exactly the
// directories the resolution depends on, resolving again until the chain
// holds still: a path being rebuilt one directory at a time needs one round
// per level. Watches are added before the file is read, so a change is
// either seen by the read or reported by an event.
func (s *session) arm(force bool) error {
	var err error
	for range maxArmRounds {
		var added bool
		added, err = s.track(force)
		force = false
		if err == nil && !added {
			break
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	s.prune()
	return err
}

// track resolves the path and adds the watches it needs that are missing
// (all of them if force). It reports whether it added any, in which case
// the resolution may already be stale.
func (s *session) track(force bool) (added bool, err error) {
	s.chain = resolve(s.f.abs, s.n.Want)
	missing := s.missing(force)
	return len(missing) > 0, s.add(missing)
}

// missing lists the directories of the chain not watched yet (all of them
// if force).
func (s *session) missing(force bool) []string {
	var dirs []string
	for _, d := range s.chain.dirs {
		if force || !s.armed[d] {
			dirs = append(dirs, d)
		}
	}
	return dirs
}

func (s *session) add(dirs []string) error {
	for _, d := range dirs {
		if err := s.n.Add(d); err != nil {
			return fmt.Errorf("add watch on %s: %w", d, err)
		}
		s.armed[d] = true
		s.dirsChanged = true
	}
	return nil
}

// prune removes the watches, and forgets the names, the chain no longer
// needs.
func (s *session) prune() {
	s.n.Forget(s.chain.names)
	for d := range s.armed {
		if !slices.Contains(s.chain.dirs, d) {
			delete(s.armed, d)
			s.dirsChanged = true
			// An error only says the kernel already dropped the watch.
			_ = s.n.Remove(d)
		}
	}
	s.publishDirs()
}

// read re-reads the file and delivers what the user has not seen.
func (s *session) read(why reason, settled bool) {
	if s.settle.blocksReads() && !settled {
		return // in-place writes are under way; the window's end reads
	}
	c, err := readFile(s.f.abs, s.f.path, s.f.opts.maxSize)
	s.consider(why, c, err, settled)
}

// consider delivers a read. Unless settled, a missing or empty file is
// doubted rather than believed: either is far more often the middle of an
// update (a remove-then-create swap, a file created before it is written)
// than its end. It is reported or delivered only if it lasts a quiet window,
// and any event in between reads again at once.
func (s *session) consider(why reason, c content, err error, settled bool) {
	doubtful := errors.Is(err, fs.ErrNotExist) || (err == nil && len(c.data) == 0)
	if doubtful && !settled && s.settle.window > 0 {
		s.settle.doubt(why)
		return
	}
	s.settle.clearDoubt()
	s.sig = c.info
	s.w.deliver(why, c, err)
}

func (s *session) close() {
	s.settle.stop()
	if s.retry != nil {
		s.retry.Stop()
	}
	if err := s.n.Close(); err != nil {
		s.f.opts.log().Debug("keepwatch: closing notifier", slog.String("path", s.f.path), slog.Any("error", err))
	}
}

// deliver hands the result of a read to the user: content the user has not
// seen to the callback, a new problem as an error.
func (w *watch) deliver(why reason, c content, err error) {
	if err != nil {
		w.reportFile(err)
		return
	}
	back := w.fileProblem != ""
	w.fileProblem = ""
	log := w.f.opts.log()
	if back {
		log.Info("keepwatch: file back", slog.String("path", w.f.path))
	}

	f := w.f
	f.mu.Lock()
	prev := f.seen.state
	// After a reported problem, content comes back even if the user has seen
	// it: the callback's last word must describe the file as it is.
	if (prev == seenContent && f.seen.sum == c.sum && !back) || w.stopped() {
		f.mu.Unlock()
		return
	}
	f.seen = seenMark{state: seenContent, sum: c.sum}
	f.delivering = c.data
	f.stats.updates++
	f.stats.lastUpdate, f.stats.lastUpdateReason = time.Now(), why
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.delivering = nil
		f.mu.Unlock()
	}()

	op := fsnotify.Write
	if back || prev == seenFailed {
		op = fsnotify.Create
	}
	log.Info("keepwatch: update delivered", slog.String("path", f.path), slog.String("reason", string(why)),
		slog.Int("size", len(c.data)), slog.String("sha256", shortSum(c.sum)))
	w.cb(fsnotify.Event{Name: f.path, Op: op}, nil)
}

// reportFile reports a problem with the file (missing, not regular, too
// large, unreadable) once; the watch goes on and delivers the file when it
// is readable again.
func (w *watch) reportFile(err error) {
	if err.Error() == w.fileProblem {
		return
	}
	w.fileProblem = err.Error()
	w.f.opts.log().Warn("keepwatch: file problem", slog.String("path", w.f.path), slog.Any("error", err))
	w.emitError(err)
}

// sameStat reports whether two stats of the file look alike, in which case
// the re-check skips the read.
func sameStat(a, b fs.FileInfo) bool {
	return os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}

func shortSum(sum [32]byte) string { return hex.EncodeToString(sum[:6]) }

// settle is a session's wait for the file to settle before it is read or
// believed. It is one of two kinds:
//
//   - writing: in-place writes are under way. Nothing is read until a window
//     passes without a write, or maxWaitFactor windows after the first one,
//     so that a file written without pause is still read.
//   - doubt: a read found the file missing or empty. That is reported or
//     delivered when the window ends, unless an event first shows it was the
//     middle of an update.
type settle struct {
	window time.Duration // the quiet window; zero turns settling off
	timer  *time.Timer   // nil when not waiting
	start  time.Time     // when the wait began
	why    reason        // what started it
	writes bool          // the kind: writing, or doubt
}

// writing starts or extends a wait for writes to stop; a doubt becomes one.
func (q *settle) writing(why reason) {
	now := time.Now()
	if q.timer == nil || !q.writes {
		q.stop()
		q.start, q.why, q.writes = now, why, true
		q.timer = time.NewTimer(q.window)
		return
	}
	q.timer.Reset(max(0, min(q.window, q.start.Add(maxWaitFactor*q.window).Sub(now))))
}

// doubt starts a doubt, unless a wait is running: its end reads anyway, and
// events during it must not postpone a real problem's report.
func (q *settle) doubt(why reason) {
	if q.timer != nil {
		return
	}
	q.start, q.why, q.writes = time.Now(), why, false
	q.timer = time.NewTimer(q.window)
}

// clearDoubt ends a doubt that a read has just dispelled.
func (q *settle) clearDoubt() {
	if !q.writes {
		q.stop()
	}
}

func (q *settle) blocksReads() bool { return q.timer != nil && q.writes }

// C fires when the wait is over; then call fired.
func (q *settle) C() <-chan time.Time {
	if q.timer == nil {
		return nil
	}
	return q.timer.C
}

// fired ends the wait and returns what started it.
func (q *settle) fired() reason {
	q.timer = nil
	return q.why
}

func (q *settle) stop() {
	if q.timer != nil {
		q.timer.Stop()
		q.timer = nil
	}
}
