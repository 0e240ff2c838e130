package file

import (
	"time"

	"github.com/keepwatch/file/internal/events"
)

// The options only tests give: each replaces a part of the watch that
// touches the system with one the test controls.

// withBackoff sets the bounds of the delay before a broken watch is re-armed,
// to make the delays short or long.
// The delay starts near lo, doubles with each failure in a row up to hi,
// is jittered, and starts again from lo after a healthy run (one that lasts
// at least hi). Values of zero or less keep the defaults.
func withBackoff(lo, hi time.Duration) Option {
	return func(o *options) {
		if lo > 0 {
			o.backoffMin = lo
		}
		if hi > 0 {
			o.backoffMax = hi
		}
		o.backoffMax = max(o.backoffMax, o.backoffMin)
	}
}

// withoutWriterProbe never asks the kernel of the file's writers, as where
// it does not say: for tests that play a writer by its events and the
// file's times alone, with no descriptor held open.
func withoutWriterProbe() Option {
	return func(o *options) { o.probeWriters = false }
}

// withNotifier replaces the filesystem notifier, to inject failures.
func withNotifier(newNotifier func() (events.Notifier, error)) Option {
	return func(o *options) { o.newNotifier = newNotifier }
}

// withFSType replaces the filesystem-type probe, to play NFS.
func withFSType(probe func(path string) (string, bool)) Option {
	return func(o *options) { o.fsType = probe }
}

// withMountInfo reads the mount table from path instead of
// /proc/self/mountinfo, to play a subPath mount.
func withMountInfo(path string) Option {
	return func(o *options) { o.mountInfo = path }
}
