package osfile

import (
	"io/fs"
	"sync/atomic"

	"github.com/keepwatch/file/internal/decide"
	"github.com/keepwatch/file/internal/fsinfo"
	"github.com/keepwatch/file/internal/writers"
)

// writersOn asks the kernel whether anyone holds the file open for
// writing, on fd, a descriptor of it open read-only (internal/writers).
func writersOn(f *rawFile) decide.Writers {
	a, _ := writers.On(f.fd, f.mount)
	return a
}

// writersOf asks the kernel whether anyone holds the file at path open for
// writing, if it is still the file want describes (not known otherwise).
func WritersOf(path string, want fs.FileInfo) decide.Writers {
	f, err := openToRead(path)
	if err != nil {
		return decide.WritersUnknown
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil || !info.Mode().IsRegular() || !SameFile(info, want) {
		return decide.WritersUnknown
	}
	return writersOn(f.(*rawFile))
}

// kernelAsked counts the reads that asked the kernel of a file's writers,
// each with a lease, however brief: for the tests, which hold the watch to
// asking none while a file's own watch tells who holds it open.
var kernelAsked atomic.Int64

// KernelAsked is how many reads of the process have asked the kernel of a
// file's writers so far, each with a lease, however brief. It is for the
// tests.
func KernelAsked() int64 { return kernelAsked.Load() }

// askedWriters is what a read asked the kernel of the file's writers, and
// how far the answer goes.
type askedWriters struct {
	answer decide.Writers
	held   bool // the lease is held until releaseWriters: no writer gets in before the read is done
	fine   bool // the filesystem gives every change a change time of its own: stamps tell a change as the file was read
}

// askWriters asks the kernel, if ask, whether anyone holds the file r,
// open for reading, open for writing, before it is read
// (internal/writers.Ask): where the filesystem's change times tell every
// change, the lease is let go at once, and the read's stamps tell a writer
// that began meanwhile; elsewhere it is held until releaseWriters (or
// r's close). Without ask, it only says whether the change times tell.
func askWriters(r readable, ask bool) askedWriters {
	f, ok := r.(*rawFile)
	switch {
	case !ok:
		return askedWriters{}
	case !ask:
		return askedWriters{fine: fsinfo.FineTimesAt(f.fd, f.mount)}
	}
	kernelAsked.Add(1)
	p := writers.Ask(f.fd, f.mount)
	return askedWriters{answer: p.Answer, held: p.Held, fine: p.Fine}
}

// releaseWriters lets the writers askWriters kept out of r in.
func releaseWriters(r readable) {
	if f, ok := r.(*rawFile); ok {
		writers.Release(f.fd)
	}
}

// sizesTold reports whether r's filesystem gives its files their true
// size (fsinfo.SizesAt): not proc's or sysfs's, whose files report 0.
func sizesTold(r readable) bool {
	if f, ok := r.(*rawFile); ok {
		return fsinfo.SizesAt(f.fd, f.mount)
	}
	return true
}
