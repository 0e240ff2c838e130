//go:build !linux

package bench

// Off Linux the kernel's instances and watches cannot be counted: the
// benchmarks report zero.

func countInotifyFDs() int    { return 0 }
func countKernelWatches() int { return 0 }
