//go:build !linux

package file

import (
	"io/fs"

	"github.com/keepwatch/file/internal/decide"
)

// writersOf says nothing of writers here: only Linux's leases tell.
func writersOf(string, fs.FileInfo) decide.Writers { return decide.WritersUnknown }

// holdAgainstWriters says nothing of writers here: only Linux's leases
// tell.
func holdAgainstWriters(readable) decide.Writers { return decide.WritersUnknown }

// releaseWriters has nothing to release here.
func releaseWriters(readable) {}
