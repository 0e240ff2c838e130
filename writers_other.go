//go:build !linux

package file

import (
	"io/fs"

	"github.com/keepwatch/file/internal/decide"
)

// writersOf says nothing of writers here: only Linux's leases tell.
func writersOf(string, fs.FileInfo) decide.Writers { return decide.WritersUnknown }

// writersOfOpen says nothing of writers here: only Linux's leases tell.
func writersOfOpen(readable) decide.Writers { return decide.WritersUnknown }
