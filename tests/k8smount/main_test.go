package k8smount_test

import (
	"testing"

	"go.uber.org/goleak"
)

// Upstream's tests with keepwatch's drop-in leak nothing: Unwatch stops
// the watch. The process's one inotify instance, shared by every watch,
// outlives them, and so does the goroutine of a watch whose Unwatch did
// not wait for it (upstream's Unwatch does not wait either).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreAnyFunction("github.com/keepwatch/file.(*inotifyBackend).readEvents"),
		goleak.IgnoreAnyFunction("github.com/keepwatch/file.(*inotifyBackend).readMounts"),
	)
}
