package file

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/knadh/koanf/v2"
)

// File is a koanf.Provider that reads a file from disk and can watch it for
// changes. Create it with [Provider]. A File is safe for use by multiple
// goroutines.
type File struct {
	t    target
	opts options // t.opts points here

	mu         sync.Mutex
	sv         *supervisor // the current watch, or the last one, stopped, nil if none
	seen       seenMark    // the content the application last got, from ReadBytes or a callback
	delivering []byte      // content of the running callback, nil otherwise
	stats      stats

	subPathChecked atomic.Bool // the subPath warning is given once per provider
}

var _ koanf.Provider = (*File)(nil)

// seenMark records content the application got, so that a watch fires
// only for content it has not seen.
type seenMark struct {
	state seenState
	sum   [sha256.Size]byte
}

type seenState uint8

const (
	seenNothing seenState = iota // never read: the first watch read is the baseline
	seenFailed                   // read, but never successfully
	seenContent                  // sum holds the content last read or delivered
)

func markOf(r reading) seenMark {
	if r.err != nil {
		return seenMark{state: seenFailed}
	}
	return seenMark{state: seenContent, sum: r.c.sum}
}

// Provider returns a provider for the file at path. It does no I/O: a missing
// or unreadable file is reported by ReadBytes and by the watch.
//
// A relative path is taken from the working directory at the time of the
// call. The path is resolved the way the kernel resolves it: a ".." after
// a symlink to a directory goes up from where the symlink leads, as open(2)
// does, not from where it sits. Events and errors name the path as given,
// cleaned, as koanf's stock provider does.
func Provider(path string, opts ...Option) *File {
	f := &File{opts: newOptions(opts)}
	f.t = target{path: filepath.Clean(path), abs: absPath(path), opts: &f.opts}
	return f
}

// absPath makes path absolute without cleaning it: cleaning "a/link/../b"
// to "a/b" would read another file than the kernel opens when link is a
// symlink to a directory. Windows resolves ".." by the name, so it is
// cleaned there.
func absPath(path string) string {
	if runtime.GOOS == "windows" {
		if abs, err := filepath.Abs(path); err == nil {
			return abs
		}
		return path
	}
	if filepath.IsAbs(path) {
		return path
	}
	wd, err := os.Getwd()
	if err != nil {
		return path
	}
	return wd + string(filepath.Separator) + path
}

// ReadBytes reads the file and returns its content.
//
// While a watch callback is running, ReadBytes returns the exact content that
// the callback was fired for, without reading the file again; so k.Load
// inside the callback loads what was judged to be new, never a file caught
// half-written by a later update. A later update fires the callback again.
//
// A missing file gives the *fs.PathError of the failed open, as os.ReadFile
// would. A path that is not a regular file gives [ErrNotRegularFile], one
// over the size limit [ErrFileTooLarge].
func (f *File) ReadBytes() ([]byte, error) {
	if b := f.deliveringNow(); b != nil {
		return b, nil
	}
	r := f.t.read("")
	f.markRead(r)
	if r.err != nil {
		return nil, r.err
	}
	return r.c.data, nil
}

// Read is not supported by the file provider; use ReadBytes with a parser.
func (f *File) Read() (map[string]any, error) {
	return nil, errReadUnsupported
}

// Watch watches the file and calls cb when its content changes, until
// [File.Unwatch] is called. It returns at once; the watch runs in a goroutine
// of its own. It is WatchWithContext with a context that is never done.
func (f *File) Watch(cb func(event any, err error)) error {
	return f.WatchWithContext(context.Background(), cb)
}

// WatchWithContext watches the file and calls cb when its content changes,
// until ctx is done or [File.Unwatch] is called. The watch is in place when
// it returns: any change made afterwards is delivered.
//
// cb(event, nil) means "new content: reload". event is an fsnotify.Event
// naming the watched path, with Op fsnotify.Write, or fsnotify.Create when
// the file came back after a problem. The callback fires once for each
// content the watch has not delivered yet, judged by comparing content, not
// events: a touch, a chmod or an identical rewrite fire nothing, and a burst
// of changes fires for the final content. Content read by a ReadBytes call
// made before Watch is the baseline, so an update between loading the file
// and starting the watch is delivered at once; ReadBytes calls made while
// the watch runs (a health check, a second k.Load) change nothing.
//
// The watch never ends on its own. A problem (the file missing or
// unreadable, the watch broken and being re-armed) is logged, at WARN, and
// counted in [File.Stats], and the watch goes on; it is logged again, at
// INFO, when it is over, and the file is then delivered. By default the
// callback is never called with an error: code written for koanf's stock
// provider takes cb(nil, err) as the end of the watch and starts another,
// and keepwatch's watch does not end. [WithErrorCallbacks] makes the
// callback also get cb(nil, err) for each problem, as it happens.
//
// Callbacks run one at a time, in order, on the watch goroutine; none starts
// after Unwatch has returned. A slow callback delays later deliveries but
// loses none.
//
// Watch returns [ErrAlreadyWatching] if the file is already being watched.
func (f *File) WatchWithContext(ctx context.Context, cb func(event any, err error)) error {
	if cb == nil {
		return errNilCallback
	}
	if f.isWatching() {
		return ErrAlreadyWatching
	}
	first := launchSession(f.t, reasonStart) // I/O outside the lock; checked again below
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.sv != nil && !f.sv.stopped() {
		first.close()
		return ErrAlreadyWatching
	}
	if f.seen.state == seenNothing {
		// Nobody read the file before Watch: the content now is the baseline.
		f.seen = markOf(first.read)
	}
	// Stats must show the watch as it is when Watch returns.
	f.stats.mode, f.stats.dirs = ModeRetrying, nil
	if first.s != nil {
		f.stats.mode, f.stats.dirs = first.s.mode(), first.s.watchedDirs()
	}
	// The last watch may still be in a callback: the new one's first waits
	// for it, so that callbacks never overlap.
	f.sv = startSupervisor(ctx, f, cb, f.sv, first, f.seen)
	return nil
}

// isWatching reports whether a watch is running and not stopping.
func (f *File) isWatching() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.sv != nil && !f.sv.stopped()
}

// Unwatch stops the watch: no callback starts after it returns. It does not
// wait for a callback that is running, which may be waiting for the caller
// (a lock the caller holds, a shutdown the caller drives): like koanf's
// stock provider, it cannot deadlock with one. [File.Shutdown] waits.
//
// Unwatch is idempotent and safe to call from any goroutine, the callback
// included. Watch may be called again afterwards, even while the old
// callback still runs: the new watch's callbacks start after it returns.
func (f *File) Unwatch() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.sv != nil {
		f.sv.stop()
	}
	return nil
}

// Shutdown stops the watch, as Unwatch does, then waits until no callback
// runs and the watch's goroutine has exited, or until ctx is done, and then
// returns ctx's error. A watch that a running callback starts meanwhile is
// stopped and waited for too. Called from inside the callback, it would
// wait for itself until ctx is done: call Unwatch there.
func (f *File) Shutdown(ctx context.Context) error {
	for {
		f.mu.Lock()
		sv := f.sv
		if sv != nil {
			sv.stop()
		}
		f.mu.Unlock()
		if sv == nil {
			return nil
		}
		select {
		case <-sv.done:
		case <-ctx.Done():
			return ctx.Err()
		}
		if f.clearWatch(sv) {
			return nil
		}
	}
}

// clearWatch clears f.sv if it is still sv, and reports whether it was.
func (f *File) clearWatch(sv *supervisor) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.sv != sv {
		return false
	}
	f.sv = nil
	return true
}

// deliveringNow returns the content of the running callback, or nil.
func (f *File) deliveringNow() []byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.delivering
}

// markRead records what a ReadBytes call gave the application: the
// baseline of the next watch, not of the one that runs.
func (f *File) markRead(r reading) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r.err != nil && f.seen.state != seenNothing {
		return
	}
	f.seen = markOf(r)
}

// deliver calls cb with r's content and op, unless the watch has stopped
// (ctx is done), and reports whether it did. While cb runs, ReadBytes
// returns that content.
func (f *File) deliver(ctx context.Context, cb func(any, error), r reading, op fsnotify.Op) bool {
	if !f.startDelivery(ctx, r) {
		return false
	}
	defer f.endDelivery()
	f.t.opts.log().Debug("keepwatch: update delivered", slog.String("path", f.t.path), slog.String("reason", string(r.why)),
		slog.Int("size", len(r.c.data)), slog.String("sha256", hex.EncodeToString(r.c.sum[:6])))
	cb(fsnotify.Event{Name: f.t.path, Op: op}, nil)
	return true
}

// startDelivery marks r's content as what the application has seen and as
// what ReadBytes returns, and counts the update, unless ctx is done. It
// checks ctx under f.mu, which Unwatch holds to stop the watch: so no
// callback starts after Unwatch returns.
func (f *File) startDelivery(ctx context.Context, r reading) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if ctx.Err() != nil {
		return false
	}
	f.seen = markOf(r)
	f.delivering = r.c.data
	f.stats.updates++
	f.stats.lastUpdate, f.stats.lastUpdateReason = time.Now(), r.why
	return true
}

// endDelivery ends what startDelivery began, once the callback returned.
func (f *File) endDelivery() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.delivering = nil
}

// report counts a problem and, with WithErrorCallbacks, calls cb with it,
// unless the watch has stopped.
func (f *File) report(ctx context.Context, cb func(any, error), err error) {
	if !f.recordError(ctx, err) || !f.t.opts.errorCallbacks {
		return
	}
	cb(nil, err)
}

// recordError counts a problem, unless ctx is done, checked under f.mu as
// startDelivery does; it reports whether it did.
func (f *File) recordError(ctx context.Context, err error) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if ctx.Err() != nil {
		return false
	}
	f.stats.errors++
	f.stats.lastError, f.stats.lastErrorTime = err, time.Now()
	return true
}

// recordSession records that a session runs, how, and what it watches.
func (f *File) recordSession(mode Mode, dirs []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stats.mode, f.stats.dirs = mode, dirs
}

// recordDirs records what the running session watches now.
func (f *File) recordDirs(dirs []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stats.dirs = dirs
}

// recordFailure records that a session failed; mode is what follows, and
// restart whether it counts as a restart (trying events again while
// polling does not).
func (f *File) recordFailure(mode Mode, restart bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if restart {
		f.stats.restarts++
	}
	f.stats.mode, f.stats.dirs = mode, nil
}

// firstSubPathCheck reports whether this is the provider's first subPath
// check: the warning is given once per provider, not per Watch.
func (f *File) firstSubPathCheck() bool {
	return f.subPathChecked.CompareAndSwap(false, true)
}

// errorf wraps err as an *fs.PathError on the provider's path.
func (f *File) errorf(op string, err error) error {
	return &fs.PathError{Op: op, Path: f.t.path, Err: err}
}
