package file

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// What the tests and benchmarks look up about the kernel's side of the
// watch. /proc tells it on Linux; inspect_other_test.go says what is left
// elsewhere.

var inotifyMu sync.Mutex

// countInotifyFDs counts this process's inotify instances.
func countInotifyFDs() int {
	inotifyMu.Lock()
	defer inotifyMu.Unlock()
	n := 0
	eachInotify(func(string) { n++ })
	return n
}

// countKernelWatches counts the inotify watches the process holds, over all
// its inotify instances.
func countKernelWatches() int {
	n := 0
	eachInotify(func(fd string) {
		b, _ := os.ReadFile(filepath.Join("/proc/self/fdinfo", fd))
		n += strings.Count(string(b), "inotify wd:")
	})
	return n
}

// eachInotify calls f with the number of each inotify descriptor the
// process has open.
func eachInotify(f func(fd string)) {
	entries, _ := os.ReadDir("/proc/self/fd")
	for _, e := range entries {
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil && target == "anon_inode:inotify" {
			f(e.Name())
		}
	}
}

// countInotify counts this process's inotify instances, for a test.
func countInotify(t *testing.T) int {
	t.Helper()
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("no /proc/self/fd")
	}
	return countInotifyFDs()
}

// countFDs counts the descriptors this process has open.
func countFDs(t *testing.T) int {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd")
	}
	return len(entries)
}
