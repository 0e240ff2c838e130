package koanf_test

import (
	"testing"

	"go.uber.org/goleak"
)

// Three of koanf's tests never call Unwatch (TestWatchFileSymlink,
// TestWatchFileDirectorySymlink, TestFileWatcherRaceCondition), so their
// watches run until the process ends, as they would with the stock provider
// until its first error. Their goroutines are not leaks of keepwatch's.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreAnyFunction("github.com/keepwatch/file.(*delivery).run"),
		goleak.IgnoreAnyFunction("github.com/keepwatch/file/internal/events.(*inotifyBackend).readEvents"),
		goleak.IgnoreAnyFunction("github.com/keepwatch/file/internal/events.(*inotifyBackend).readMounts"),
	)
}
