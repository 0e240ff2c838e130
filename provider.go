package file

import (
	"context"
	"crypto/sha256"
	"errors"
	"io/fs"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/knadh/koanf/v2"
)

// Errors reported by [File.ReadBytes], [File.Watch] and through the watch
// callback. Every error that concerns the watched file is an [*fs.PathError]
// naming the path the provider was created with, so errors.Is works with
// these sentinels and with the standard ones ([fs.ErrNotExist],
// [fs.ErrPermission]).
var (
	// ErrAlreadyWatching is returned by Watch when the file is already being
	// watched. Its text is the one koanf's stock file provider uses, so code
	// that compares error strings keeps working.
	ErrAlreadyWatching = errors.New("file is already being watched")

	// ErrNotRegularFile means the path resolves to a directory, a named pipe,
	// a device, a socket or anything else that is not a regular file. Such a
	// path is never read, so it can neither hang the reader nor feed it an
	// endless stream.
	ErrNotRegularFile = errors.New("keepwatch: not a regular file")

	// ErrFileTooLarge means the file is larger than the limit set with
	// [WithMaxSize].
	ErrFileTooLarge = errors.New("keepwatch: file too large")

	// ErrWatchInterrupted means the filesystem watch could not be set up or
	// broke (an fsnotify error, an event queue overflow, a closed channel).
	// The provider re-arms the watch by itself and re-reads the file; the
	// error wraps the cause.
	ErrWatchInterrupted = errors.New("keepwatch: watch interrupted")

	// ErrPolling means the provider is polling the file at an interval,
	// because filesystem events cannot be had (inotify instances or watches
	// exhausted, a watch refused) or because the file is on a filesystem that
	// delivers none for changes made elsewhere (NFS, SMB, FUSE). Changes are
	// seen within the interval; the provider goes back to events as soon as
	// they work again. When events broke, the error also matches
	// ErrWatchInterrupted and wraps the cause.
	ErrPolling = errors.New("keepwatch: polling")

	// ErrSubPathMount means the watched file is a bind mount of a single
	// file, which is what a Kubernetes subPath volume mount is. Kubelet
	// never updates such a mount in a running pod: the file will not change
	// however the ConfigMap or Secret does. Mount the volume as a directory
	// and read the file inside it. It is reported once, through the callback
	// and the logger, and the watch goes on.
	ErrSubPathMount = errors.New("keepwatch: file is a single-file bind mount (kubernetes subPath) and will not change in a running pod; mount the directory instead")

	// errNilCallback is returned by Watch when given a nil callback.
	errNilCallback = errors.New("keepwatch: nil callback")
)

// The stock provider's text for Read, kept for code that compares it.
var errReadUnsupported = errors.New("file provider does not support this method")

// File is a koanf.Provider that reads a file from disk and can watch it for
// changes. Create it with [Provider]. A File is safe for use by multiple
// goroutines.
type File struct {
	path string // as given, cleaned: names the file in events and errors
	abs  string // absolute form of path, used to resolve it
	opts options

	mu         sync.Mutex
	w          *watch   // the current watch, nil when not watching
	seen       seenMark // the content the user last got
	delivering []byte   // content of the running callback, nil otherwise
	stats      stats

	subPathChecked atomic.Bool // the subPath warning is given once per provider
}

var _ koanf.Provider = (*File)(nil)

// seenMark records what the user last got from the provider, so that a watch
// fires only for content the user has not seen.
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

// Provider returns a provider for the file at path. It does no I/O: a missing
// or unreadable file is reported by ReadBytes and by the watch.
func Provider(path string, opts ...Option) *File {
	path = filepath.Clean(path)
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	return &File{path: path, abs: abs, opts: newOptions(opts)}
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
	f.mu.Lock()
	if b := f.delivering; b != nil {
		f.mu.Unlock()
		return b, nil
	}
	f.mu.Unlock()

	c, err := readFile(f.abs, f.path, f.opts.maxSize)
	f.mu.Lock()
	defer f.mu.Unlock()
	if err != nil {
		if f.seen.state == seenNothing {
			f.seen.state = seenFailed
		}
		return nil, err
	}
	f.seen = seenMark{state: seenContent, sum: c.sum}
	return c.data, nil
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
// the file came back after a reported problem. The callback fires once for
// each content the user has not seen yet, judged by comparing content, not
// events: a touch, a chmod or an identical rewrite fire nothing, and a burst
// of changes fires for the final content. Content read by a ReadBytes call
// made before Watch is the baseline, so an update between loading the file
// and starting the watch is delivered at once.
//
// cb(nil, err) reports a problem while the watch goes on: the file is
// missing or unreadable ([fs.ErrNotExist], [ErrNotRegularFile],
// [ErrFileTooLarge], ...), or the watch broke and is being re-armed
// ([ErrWatchInterrupted]). The same ongoing problem is reported once. A
// missing file is reported once it has stayed missing for a quiet window, so
// that a remove-then-create swap reports nothing. A file that is missing
// when Watch is called is reported this way, and delivered as soon as it
// appears.
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
	if f.watching() {
		return ErrAlreadyWatching
	}
	first := arm(f) // I/O outside the lock; checked again below
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.w != nil && !f.w.stopped() {
		first.close()
		return ErrAlreadyWatching
	}
	if f.seen.state == seenNothing {
		// Nobody read the file before Watch: the content now is the baseline.
		f.seen = seenMark{state: seenFailed}
		if first.rerr == nil {
			f.seen = seenMark{state: seenContent, sum: first.c.sum}
		}
	}
	// Stats must show the watch as it is when Watch returns.
	f.stats.mode = ModeRetrying
	if first.s != nil {
		f.stats.mode = first.s.mode()
	}
	f.w = startWatch(ctx, f, cb, f.w, first)
	return nil
}

// watching reports whether a watch is running and not stopping.
func (f *File) watching() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.w != nil && !f.w.stopped()
}

// Unwatch stops the watch and waits for its goroutine to exit, so no callback
// runs after it returns. Called from inside the callback, it returns at once
// and the watch ends when the callback returns. Unwatch is idempotent and
// safe to call from any goroutine; Watch may be called again afterwards.
func (f *File) Unwatch() error {
	// A callback running while we wait may call Watch: stop that watch too,
	// or it would deliver after Unwatch has returned.
	for {
		f.mu.Lock()
		w := f.w
		self := w != nil && w.runsOnCaller()
		f.mu.Unlock()
		if w == nil {
			return nil
		}
		w.stop()
		if self {
			// Keep w as f.w: a Watch from this same callback must wait for it.
			return nil
		}
		<-w.done
		if f.forget(w) {
			return nil
		}
	}
}

// forget clears f.w if it is still w, and reports whether it was.
func (f *File) forget(w *watch) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.w != w {
		return false
	}
	f.w = nil
	return true
}

// errorf wraps err as an *fs.PathError on the provider's path.
func (f *File) errorf(op string, err error) error {
	return &fs.PathError{Op: op, Path: f.path, Err: err}
}
