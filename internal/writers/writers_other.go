//go:build !linux

package writers

import "github.com/keepwatch/file/internal/decide"

// On says nothing here: only Linux has leases.
func On(int, uint64) (decide.Writers, error) { return decide.WritersUnknown, ErrNotSupported }

// Hold says nothing here, and holds nothing.
func Hold(int, uint64) (decide.Writers, error) { return decide.WritersUnknown, ErrNotSupported }

// Release does nothing here.
func Release(int) {}

// Ask says nothing here, and holds nothing.
func Ask(int, uint64) Probe { return Probe{Err: ErrNotSupported} }
