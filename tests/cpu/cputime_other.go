//go:build !unix

package main

import "time"

// cpuTime is not measured here: the harness runs on Linux.
func cpuTime() time.Duration { return 0 }
