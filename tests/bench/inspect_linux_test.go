package bench

import (
	"os"
	"path/filepath"
	"strings"
)

// What BenchmarkFootprint looks up about the kernel's side of the watch,
// counted as the root package's tests count it (inspect_linux_test.go
// there); inspect_other_test.go says what is left elsewhere.

// countInotifyFDs counts this process's inotify instances.
func countInotifyFDs() int {
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
