package file

import (
	"errors"
	"io/fs"
	"path/filepath"
	"syscall"

	"github.com/keepwatch/file/internal/chain"
)

// Watch starts only on a path that resolves, as koanf's stock provider's
// does: code written for it asks Watch whether the file is there (a test
// that removes the file and expects an error, a service that must not run
// without its config). Once a watch has started, it never ends on its own:
// a path that goes away later is waited for. [WithWaitForPath] waives the
// check, for a service started before its file exists (see
// core.startable).

// missing says why the file's path does not resolve now, or nil.
func (f *fileSubject) missing() error {
	c := chain.Resolve(f.abs, nil)
	return unresolved(f.path, c.Err)
}

// missing says why the set's directory, or a file a [Set] names, does not
// resolve now, or nil. A [Glob]'s files are whichever match: none is an
// empty set. A directory that is something else is a problem the watch
// reports, as a File's path that is not a regular file is.
func (s *setSubject) missing() error {
	c := chain.Resolve(s.abs, nil)
	if c.Err != nil {
		return unresolved(s.dirName(), c.Err)
	}
	p, err := s.locate(&c)
	if err != nil {
		return nil
	}
	for _, n := range s.names {
		if mc := chain.Resolve(filepath.Join(p.base, n), nil); mc.Err != nil {
			return unresolved(filepath.Join(s.dirName(), n), mc.Err)
		}
	}
	return nil
}

// unresolved is the error Watch returns for a path that does not resolve:
// an *fs.PathError naming the path as given, holding the errno of the
// lookup that failed, so that errors.Is(err, fs.ErrNotExist) and the older
// os.IsNotExist(err) both hold for a missing path, as they do for the stock
// provider's error. nil if err is nil.
func unresolved(name string, err error) error {
	if err == nil {
		return nil
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		err = errno
	}
	return &fs.PathError{Op: "watch", Path: name, Err: err}
}
