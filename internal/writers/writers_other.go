//go:build !linux

package writers

// On says nothing here: only Linux has leases.
func On(int) (Answer, error) { return Unknown, ErrNotSupported }
