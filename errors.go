package file

import (
	"errors"
	"fmt"
	"io/fs"
	"reflect"
	"syscall"
	"time"

	"github.com/keepwatch/file/internal/osfile"
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
	ErrNotRegularFile = osfile.ErrNotRegular

	// ErrFileTooLarge means the file is larger than the limit set with
	// [WithMaxSize].
	ErrFileTooLarge = osfile.ErrTooLarge

	// ErrWatchInterrupted means the filesystem watch could not be set up or
	// broke (an inotify or fsnotify error, a closed channel, a watch that
	// could not be added). An event queue overflow is none of these: the
	// watch looks at everything again, and reports nothing.
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

	// ErrSubPathMount means the watched file is a single file mounted on
	// its own: a Kubernetes subPath volume mount, or docker's
	// -v ./config.yaml:/etc/app/config.yaml. Such a mount is of the file,
	// not of its name on the host side: an edit in place of its source
	// arrives, and a replacement of the source (sed -i, most editors, mv,
	// kubectl cp, kubelet's update of a ConfigMap or Secret) never does;
	// [ErrSourceReplaced] tells when one happened. Mount the directory
	// instead, and read the file inside it. It is reported once per
	// provider, through the callback and the logger, and the watch goes on.
	ErrSubPathMount = errors.New("keepwatch: single-file mount")

	// ErrSourceReplaced means the source of the single file mounted at the
	// watched path (see [ErrSubPathMount]) was replaced or removed on the
	// host side: the mount holds the old file, and no change made there
	// reaches it until the mount is made again (the container or pod
	// restarted). It is reported once while it lasts, through the callback
	// and the logger, and Stats.SourceReplaced holds meanwhile; the watch
	// goes on, and delivers the file again once the mount is made again.
	ErrSourceReplaced = errors.New("keepwatch: mount source replaced")
)

var (
	errNilCallback = errors.New("keepwatch: nil callback")

	// The stock provider's text for Read, kept for code that compares it.
	errReadUnsupported = errors.New("file provider does not support this method")

	// errTryEvents ends a loop that polls because events failed: it is
	// time to try them again. It is never reported.
	errTryEvents = errors.New("keepwatch: time to try events again")
)

// watchError is a problem with the watch itself, as reported to the
// callback (inside an *fs.PathError naming the path).
type watchError struct {
	cause   error         // what broke; nil for a filesystem without events
	polling time.Duration // > 0: polling at this interval meanwhile
	fs      string        // the filesystem that delivers no events
}

func (e *watchError) Error() string {
	switch {
	case e.fs != "":
		return fmt.Sprintf("keepwatch: polling every %s: %s delivers no events for changes made elsewhere", e.polling, e.fs)
	case e.polling > 0:
		return fmt.Sprintf("keepwatch: watch interrupted, polling every %s: %v", e.polling, e.cause)
	}
	return fmt.Sprintf("keepwatch: watch interrupted: %v", e.cause)
}

// Is makes the error match ErrWatchInterrupted when events broke and
// ErrPolling while polling.
func (e *watchError) Is(target error) bool {
	switch target {
	case ErrWatchInterrupted:
		return e.cause != nil
	case ErrPolling:
		return e.polling > 0
	}
	return false
}

func (e *watchError) Unwrap() error { return e.cause }

// mountError is a problem of a single file mounted on its own: ErrSubPathMount
// or ErrSourceReplaced, and the mount's source on the host side.
type mountError struct {
	kind   error
	source string
}

func (e *mountError) Error() string {
	if e.kind == ErrSourceReplaced {
		return fmt.Sprintf("%v: %s was replaced, and its changes no longer arrive; restart to read them, and mount the directory instead", e.kind, e.source)
	}
	return fmt.Sprintf("%v from %s: edits in place arrive, a replacement does not; mount the directory instead", e.kind, e.source)
}

func (e *mountError) Unwrap() error { return e.kind }

// problem identifies a reported problem, so that the same ongoing problem
// is reported once however often it is seen again. Two problems are the
// same when they are of the same kind and have the same root cause (the
// innermost error: an errno, a sentinel), whatever the wrappers around it
// say: a watch that fails to re-arm on one directory, then on its parent,
// with ENOENT both times, is one problem. The root is kept by its type and
// text rather than by value, because some are made anew at each failure
// and some cannot be compared.
type problem struct {
	kind problemKind
	root reflect.Type
	text string
	what fs.FileMode // what a path that is not a regular file is instead
}

type problemKind uint8

const (
	kindFile    problemKind = iota + 1 // the file is missing, not regular, too large or unreadable
	kindBroken                         // the watch broke and is re-armed after a backoff
	kindPolling                        // events cannot be had: polling
	kindRemote                         // the filesystem delivers no events for remote changes: polling
	kindProcess                        // a read failed for a reason of the process, not of the file: retried
)

// problemOf returns the identity of err as a problem of kind.
func problemOf(kind problemKind, err error) problem {
	p := problem{kind: kind}
	if err == nil {
		return p
	}
	root := err
	for next := errors.Unwrap(root); next != nil; next = errors.Unwrap(root) {
		root = next
	}
	p.root, p.text = reflect.TypeOf(root), root.Error()
	var nr *osfile.NotRegularError
	if errors.As(err, &nr) {
		p.what = nr.Mode.Type()
	}
	return p
}

// unresolved is the error Watch returns for a path that does not resolve:
// an *fs.PathError naming the path as given, holding the errno of the
// lookup that failed, so that errors.Is(err, fs.ErrNotExist) and the older
// os.IsNotExist(err) both hold for a missing path, as they do for the stock
// provider's error. nil if err is nil.
func unresolved(name string, err error) error {
	if err == nil {
		return nil
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		err = errno
	}
	return &fs.PathError{Op: "watch", Path: name, Err: err}
}
