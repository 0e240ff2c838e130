package file

import (
	"io/fs"
	"time"

	"github.com/keepwatch/file/internal/decide"
	"github.com/keepwatch/file/internal/writers"
)

// writersOn asks the kernel whether anyone holds the file open for
// writing, on fd, a descriptor of it open read-only (internal/writers).
func writersOn(fd int) decide.Writers {
	a, _ := writers.On(fd)
	return answers[a]
}

// answers is what the decider is told of each of the kernel's answers.
var answers = [...]decide.Writers{writers.Unknown: decide.WritersUnknown, writers.None: decide.WritersNone,
	writers.Open: decide.WritersOpen}

// writersOf asks the kernel whether anyone holds the file at path open for
// writing, if it is still the file want describes (not known otherwise).
func writersOf(path string, want fs.FileInfo) decide.Writers {
	f, err := openToRead(path)
	if err != nil {
		return decide.WritersUnknown
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil || !info.Mode().IsRegular() || !sameFile(info, want) {
		return decide.WritersUnknown
	}
	return writersOn(f.(*rawFile).fd)
}

// gapWait is how long holdAgainstWriters asks again while a writer holds
// the file: writers one after another (os.WriteFile in a loop, a writer's
// close before the next one's open) leave gaps of a few microseconds,
// and the lease taken in one keeps the next writer out until the file is
// read, so that the read is of one writer's whole work. A writer that
// holds the file open longer is told of as one (and the closing writer
// Linux still counts a moment after its close's event is gone by then).
const gapWait = 200 * time.Microsecond

// holdAgainstWriters asks the kernel about the writers of the file r, open
// for reading, before it is read; where there are none, it keeps them out
// until releaseWriters (or r's close), so that the answer is of what is
// read (internal/writers.Hold). While a writer holds it, it asks again
// for up to gapWait.
func holdAgainstWriters(r readable) decide.Writers {
	f, ok := r.(*rawFile)
	if !ok {
		return decide.WritersUnknown
	}
	var deadline time.Time
	for {
		a, _ := writers.Hold(f.fd)
		if a != writers.Open {
			return answers[a]
		}
		if deadline.IsZero() {
			deadline = time.Now().Add(gapWait)
		} else if time.Now().After(deadline) {
			return decide.WritersOpen
		}
	}
}

// releaseWriters lets the writers holdAgainstWriters kept out of r in.
func releaseWriters(r readable) {
	if f, ok := r.(*rawFile); ok {
		writers.Release(f.fd)
	}
}
