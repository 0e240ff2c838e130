//go:build !linux

package osfile

import (
	"io/fs"

	"github.com/keepwatch/file/internal/decide"
)

// WritersOf says nothing of writers here: only Linux's leases tell.
func WritersOf(string, fs.FileInfo) decide.Writers { return decide.WritersUnknown }

// askedWriters is what a read asked the kernel of the file's writers:
// here, nothing.
type askedWriters struct {
	answer decide.Writers
	held   bool
	fine   bool
}

// askWriters says nothing of writers here: only Linux's leases tell, and
// only its change times tell every change.
func askWriters(readable, bool) askedWriters { return askedWriters{} }

// releaseWriters has nothing to release here.
func releaseWriters(readable) {}

// sizesTold says that files report their true size: proc and sysfs,
// whose files report 0, are Linux's.
func sizesTold(readable) bool { return true }
