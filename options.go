package file

import (
	"log/slog"
	"time"

	"github.com/keepwatch/file/internal/decide"
	"github.com/keepwatch/file/internal/events"
	"github.com/keepwatch/file/internal/fsinfo"
	"github.com/keepwatch/file/internal/mountinfo"
)

// Defaults for the options.
const (
	// defaultRecheckInterval is how often the file is re-checked without an
	// event, as a safety net for missed events and for filesystems that
	// deliver none (NFS, SMB, FUSE).
	defaultRecheckInterval = 30 * time.Second

	// defaultQuietWindow is how long an in-place write must be followed by no
	// further write before the file is read, where the kernel does not
	// report the writer's close (see [WithQuietWindow]).
	defaultQuietWindow = 100 * time.Millisecond

	// defaultBackoffMin and defaultBackoffMax bound the delay before a broken
	// watch is re-armed.
	defaultBackoffMin = 25 * time.Millisecond
	defaultBackoffMax = 3 * time.Second

	// defaultMaxSize is the largest file the provider reads: 16 MiB.
	defaultMaxSize = 16 << 20

	// fallbackPollInterval is how often a file is polled where events
	// cannot be had: inotify refused (a sandbox's seccomp filter, the
	// kernel's limits), or a filesystem that reports no changes made
	// elsewhere (NFS, SMB, FUSE). Users there expect seconds; a poll costs
	// a stat when nothing changed (and a read in the second after a write).
	fallbackPollInterval = 2 * time.Second
)

// Option configures a provider; pass options to [Provider].
type Option func(*options)

type options struct {
	recheck        time.Duration
	poll           time.Duration // > 0: poll at this interval, never use events
	quiet          time.Duration
	backoffMin     time.Duration
	backoffMax     time.Duration
	maxSize        int64
	logger         *slog.Logger
	errorCallbacks bool // problems go to the callback too
	contentHash    bool // Stats and the log show the content's SHA-256
	waitForPath    bool // Watch starts on a path that does not resolve, and waits for it
	probeWriters   bool // ask the kernel whether anyone holds the file open for writing (internal/osfile)
	newNotifier    func() (events.Notifier, error)
	fsType         func(path string) (name string, noEvents bool)
	mountInfo      string                              // the mount table to look for a single-file mount in; "" not to
	trace          func(decide.Input, decide.Decision) // tests: told of each step of the loop's decider
}

func newOptions(opts []Option) options {
	o := options{
		recheck:      defaultRecheckInterval,
		quiet:        defaultQuietWindow,
		backoffMin:   defaultBackoffMin,
		backoffMax:   defaultBackoffMax,
		maxSize:      defaultMaxSize,
		probeWriters: true,
		newNotifier:  events.ProcessHub.Subscribe,
		fsType:       fsinfo.Type,
		mountInfo:    mountinfo.Path,
	}
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// WithRecheckInterval sets how often the file is re-checked when no event
// arrives. A re-check costs one stat; the file is read only if the stat
// differs from the last read, or if the last read was made within a
// second of the file's last write, when a write in the same tick of the
// file's clock would leave its stat as it was. Zero or less turns
// re-checks off.
// Default: 30 s.
func WithRecheckInterval(d time.Duration) Option {
	return func(o *options) { o.recheck = max(d, 0) }
}

// WithPolling makes the provider poll the file every d instead of using
// filesystem events, for mounts keepwatch cannot tell deliver none. Each
// poll costs one stat, and a read only if the stat changed or the last
// read was made within a second of the file's last write (a write in the
// same tick leaves the stat as it was). Without it the
// provider uses events, and polls on its own, every 2 s (or at the
// re-check interval, if shorter), only while events cannot be had
// (inotify refused by a sandbox or exhausted, neither the file's directory
// nor the file itself may be watched) or for a file on a filesystem that
// reports no changes made elsewhere (NFS, SMB, FUSE, 9p, Ceph...). Zero or
// less keeps events.
// Default: off.
func WithPolling(d time.Duration) Option {
	return func(o *options) { o.poll = max(d, 0) }
}

// WithQuietWindow sets how long an in-place write (truncate, then write)
// must be followed by no further write before the file is read, where the
// kernel does not report a writer closing the file: off Linux, when
// polling, and for a change the periodic re-check found. It is also how
// long a missing or empty file is doubted before it is reported or
// delivered, and how long a [FileSet] outside a kubelet volume must go
// without a change before it is read. Writes that never pause for a window
// are read ten windows after the first, at their first 5 ms gap.
//
// On Linux an in-place write is read as soon as its writer closes the
// file, however long the window. A writer that keeps the file open (a
// slow producer behind a shell redirect) is read once it has gone a second
// (or the window, if longer) without a write, and again at its close if
// that changed anything; an empty file it holds open is not delivered
// before its close (or 10 s), and one its writer's close left empty not
// before no writer has followed for that second. So a writer that pauses
// mid-write for longer than that, holding the file open, is read half
// done, then delivered whole at its close, where koanf's stock provider
// reads at every write. Atomic updates (rename,
// symlink swap) are read at once either way. Zero turns all waiting off:
// every write is read at once, done or not.
// Default: 100 ms.
func WithQuietWindow(d time.Duration) Option {
	return func(o *options) { o.quiet = max(d, 0) }
}

// WithMaxSize sets the largest file, in bytes, that the provider reads;
// a larger file is reported with [ErrFileTooLarge]. Zero or less keeps the
// default. Default: 16 MiB.
func WithMaxSize(n int64) Option {
	return func(o *options) {
		if n > 0 {
			o.maxSize = n
		}
	}
}

// WithLogger sets the logger for the watch's state changes. Something gone
// wrong (the file missing or unreadable, the watch broken, polling, a
// single file mounted on its own, its source replaced) is logged at WARN,
// once while it lasts, and its end at INFO; the rest (watch started, each
// update delivered, each retry) at DEBUG, so that a healthy watch is
// silent at the usual levels. Nothing is logged per raw filesystem event.
// Default: nil, which logs to [slog.Default] at the time of each record,
// so the application's own slog setup applies.
func WithLogger(l *slog.Logger) Option {
	return func(o *options) { o.logger = l }
}

// WithErrorCallbacks makes the callback also get cb(nil, err) for each
// problem as it happens: the file missing or unreadable, the watch broken
// and being re-armed, polling, a single file mounted on its own, its
// source replaced. The watch goes on after each, so the callback must not
// end it or start another; the same ongoing problem is reported once. Without it, problems are only logged
// and counted in Stats: code written for koanf's stock provider, whose
// every cb(nil, err) was the end of its watch, would restart a watch that
// never ended. See [File.WatchWithContext]. Default: off.
func WithErrorCallbacks() Option {
	return func(o *options) { o.errorCallbacks = true }
}

// WithContentHash makes Stats carry the SHA-256 of the content the
// application last got (Stats.SHA256), and the log of each delivery carry
// it too, so that an operator can compare it with `sha256sum` of the file
// (of a single file: a set's hash covers all its files).
// Anyone who can read the stats or the log can then test guesses at the
// content: never use it on a Secret (a password, a token, a private key).
// Without it, Stats.Fingerprint tells versions apart within the process,
// under a key that never leaves it. Default: off.
func WithContentHash() Option {
	return func(o *options) { o.contentHash = true }
}

// WithWaitForPath makes Watch start on a path that does not resolve, for
// a service started before its file exists (a sidecar or an init step
// writes it later). The watch then waits for the path: the problem is
// reported once (logged at WARN, and to the callback with
// [WithErrorCallbacks]), and the file is delivered as soon as it is there,
// with fsnotify.Create. For a [FileSet], the path is its directory and
// each file [Set] names.
//
// Without it, Watch on a path that does not resolve (a file or directory
// missing, a dangling symlink, a directory on the way that cannot be
// searched) returns the error and watches nothing, as koanf's stock
// provider's does: an *fs.PathError naming the path, for which
// errors.Is(err, fs.ErrNotExist) holds when something is missing. Either
// way, once a watch has started it never ends on its own: a file removed
// later is waited for. Default: off.
func WithWaitForPath() Option {
	return func(o *options) { o.waitForPath = true }
}

// pollInterval is how often a loop polls: at WithPolling's interval,
// or where events cannot be had, every fallbackPollInterval (or at the
// re-check interval, if shorter).
func (o *options) pollInterval() time.Duration {
	switch {
	case o.poll > 0:
		return o.poll
	case o.recheck > 0:
		return min(o.recheck, fallbackPollInterval)
	}
	return fallbackPollInterval
}

func (o *options) log() *slog.Logger {
	if o.logger != nil {
		return o.logger
	}
	return slog.Default()
}
