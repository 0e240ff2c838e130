//go:build !linux

package osfile

// AwaitTruncation returns at once: only Linux's backend reports writers'
// closes, after which a truncation under way matters.
func AwaitTruncation(string) {}
