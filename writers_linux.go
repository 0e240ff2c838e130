package file

import (
	"io/fs"

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

// holdAgainstWriters asks the kernel about the writers of the file r, open
// for reading, before it is read; where there are none, it keeps them out
// until releaseWriters (or r's close), so that the answer is of what is
// read (internal/writers.Hold).
func holdAgainstWriters(r readable) decide.Writers {
	if f, ok := r.(*rawFile); ok {
		a, _ := writers.Hold(f.fd)
		return answers[a]
	}
	return decide.WritersUnknown
}

// releaseWriters lets the writers holdAgainstWriters kept out of r in.
func releaseWriters(r readable) {
	if f, ok := r.(*rawFile); ok {
		writers.Release(f.fd)
	}
}
