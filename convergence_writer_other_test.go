//go:build !linux

package file

import "testing"

// writeAsOther is Linux's: leases, and a thread's fsuid.
func writeAsOther(*testing.T) {}
