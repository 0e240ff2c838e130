//go:build !linux

package writers

import "github.com/keepwatch/file/internal/decide"

// On says nothing here: only Linux has leases.
func On(int) (decide.Writers, error) { return decide.WritersUnknown, ErrNotSupported }

// Hold says nothing here, and holds nothing.
func Hold(int) (decide.Writers, error) { return decide.WritersUnknown, ErrNotSupported }

// Release does nothing here.
func Release(int) {}

// Ask says nothing here, and holds nothing.
func Ask(int) Probe { return Probe{Err: ErrNotSupported} }
