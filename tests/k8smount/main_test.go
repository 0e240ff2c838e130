package k8smount_test

import (
	"testing"

	"go.uber.org/goleak"
)

// Upstream's tests with keepwatch's drop-in leak nothing once Unwatch has
// stopped their watches. The process's one inotify instance, shared by
// every watch, outlives them, with its reader's two goroutines.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreAnyFunction("github.com/keepwatch/file/internal/events.(*inotifyBackend).readEvents"),
		goleak.IgnoreAnyFunction("github.com/keepwatch/file/internal/events.(*inotifyBackend).readMounts"),
	)
}
