package file

import (
	"context"
	"os"
	"path/filepath"
	"runtime"

	"github.com/fsnotify/fsnotify"
)

// File is a koanf provider that reads a file from disk and can watch it for
// changes: a koanf.Provider of koanf v1 and of v2. Create it with
// [Provider]. A File is safe for use by multiple goroutines.
type File struct {
	core
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
	f := &File{}
	subj := &fileSubject{path: filepath.Clean(path), abs: absPath(path)}
	f.init(subj.path, subj, opts, func(_ *content, op fsnotify.Op) any {
		return fsnotify.Event{Name: subj.path, Op: op}
	})
	subj.maxSize = f.t.opts.maxSize
	f.missing = subj.missing
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
	r := f.read()
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
// Callbacks run one at a time, in order, on the watch goroutine; none is
// begun after Unwatch has returned. A slow callback delays later deliveries
// but loses none. A panic in the callback is not recovered: it ends the
// program, as with koanf's stock provider.
//
// Watch returns [ErrAlreadyWatching] if the file is already being watched.
// It starts only on a path that resolves, as koanf's stock provider's
// does: if the path does not resolve now (the file or a directory on the
// way missing, a dangling symlink), it returns an *fs.PathError naming the
// path, for which errors.Is(err, fs.ErrNotExist) holds when something is
// missing, and watches nothing. [WithWaitForPath] makes it start and wait
// for the path instead. Once started, the watch waits for a file that
// goes away.
func (f *File) WatchWithContext(ctx context.Context, cb func(event any, err error)) error {
	return f.watch(ctx, cb)
}

// Unwatch stops the watch: once it returns, no callback is begun. It does
// not wait for a callback that is running (one begun before it may still
// be running, or only starting), which may be waiting for the caller (a
// lock the caller holds, a shutdown the caller drives): like koanf's stock
// provider's, it cannot deadlock with one. [File.Shutdown] waits.
//
// Unwatch is idempotent and safe to call from any goroutine, the callback
// included. Watch may be called again afterwards, even while the old
// callback still runs: the new watch's callbacks start after it returns.
func (f *File) Unwatch() error {
	f.unwatch()
	return nil
}

// Shutdown stops the watch, as Unwatch does, then waits until no callback
// runs and the watch's goroutine has exited, or until ctx is done, and then
// returns ctx's error. A watch that a running callback starts meanwhile is
// stopped and waited for too. Called from inside the callback, it would
// wait for itself until ctx is done: call Unwatch there.
func (f *File) Shutdown(ctx context.Context) error {
	return f.shutdown(ctx)
}

// Recheck makes the running watch look at the file now, as if an event had
// come: it resolves the path again, re-adds its watches, and reads the
// file, which is delivered if its content is new, like any other change.
// A file whose stat changed with no event to say its writer is done
// (polling, a remote writer) is read a quiet window later, as the periodic
// re-check reads it, so that a write is never read half done; a watch
// waiting to re-arm after a failure re-arms at once. It is for a SIGHUP or
// an admin endpoint, or a filesystem that reports no changes. It returns at
// once, starts no goroutine, and is safe from any goroutine; calls made
// while one is pending are one. It is for the watch running when it is
// called: without one, it does nothing.
func (f *File) Recheck() {
	f.recheck()
}

// Stats returns a snapshot of the provider's state. It is safe to call from
// any goroutine, including the watch callback, and costs a lock, a copy
// and the fingerprint's HMAC.
func (f *File) Stats() Stats {
	return f.snapshot()
}
