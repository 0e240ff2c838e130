//go:build !linux

package file

import (
	"testing"
)

// Off Linux the tests cannot count the kernel's instances, watches or
// descriptors: the tests that need to skip, and the benchmarks report zero.

func countInotifyFDs() int    { return 0 }
func countKernelWatches() int { return 0 }

func countInotify(t *testing.T) int {
	t.Helper()
	t.Skip("counts inotify instances: Linux only")
	return 0
}

func countFDs(t *testing.T) int {
	t.Helper()
	t.Skip("counts descriptors in /proc: Linux only")
	return 0
}
