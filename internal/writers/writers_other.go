//go:build !linux

package writers

// On says nothing here: only Linux has leases.
func On(int) (Answer, error) { return Unknown, ErrNotSupported }

// Hold says nothing here, and holds nothing.
func Hold(int) (Answer, error) { return Unknown, ErrNotSupported }

// Release does nothing here.
func Release(int) {}

// Ask says nothing here, and holds nothing.
func Ask(int) Probe { return Probe{Err: ErrNotSupported} }
