package file

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"slices"

	"github.com/fsnotify/fsnotify"
)

// FileSet is a koanf provider for several files of one directory read as
// one config: named files (several keys of one ConfigMap or Secret), those
// a glob matches (a conf.d directory), or every file below a directory (a
// whole mounted ConfigMap or Secret). Create it with [Set], [Glob] or
// [Dir]. Load it with a nil parser, k.Load(set, nil): koanf then calls
// Read, which parses each file with the set's parser and merges them in
// order, later files over earlier ones. Files that are not configs (PEM
// files, tokens) are read as they are with [FileSet.ReadFiles], which
// needs no parser.
//
// It is watched as one: the callback fires once per change of the set,
// never once per file, with everything a [File] promises: it never stops,
// change is judged by content, nothing is read half-written (but for a
// writer that pauses mid-write: see the package documentation), bad input
// is refused, it shares the process's inotify instance, polls where it
// must, and has Stats and logs.
//
// In a kubelet volume (the directory has a ..data link: a ConfigMap,
// Secret or projected volume), every read of the set resolves ..data once
// and reads every file through what it resolved to, so a read never mixes
// two generations of the volume, and a kubelet update is read at once.
// Elsewhere, a set that is being rewritten file by file is read once it
// has gone a quiet window ([WithQuietWindow]) without a change, so that a
// read does not mix the files before and after an update either.
//
// A FileSet is safe for use by multiple goroutines.
type FileSet struct {
	core
	subj   *setSubject
	parser Parser
}

// Parser parses the content of one file of a set into a map of keys: the
// one method of koanf.Parser a set calls, so that the parsers of koanf v1
// and v2 (yaml.Parser(), json.Parser(), ...) are Parsers as they are. This
// package imports no koanf module, so that projects on either major can
// use it.
type Parser interface {
	Unmarshal([]byte) (map[string]any, error)
}

// SetEvent is what a FileSet's callback gets for a change: the set's files
// as read, and where from.
type SetEvent struct {
	Path       string      // the set's directory or glob, as given
	Files      []string    // the files read, in the order they merge
	Generation string      // the kubelet payload they were read from (the target of ..data); "" outside a kubelet volume
	Op         fsnotify.Op // Write, or Create when the set is back after a problem
}

// Set returns a provider for the files names in dir, read and merged in
// the order given. Every one of them must be there: a missing one is a
// problem (fs.ErrNotExist), and the set is delivered again once it is back.
// It does no I/O.
func Set(dir string, names []string, parser Parser, opts ...Option) *FileSet {
	return newSet(filepath.Clean(dir), &setSubject{abs: absPath(dir), names: slices.Clone(names)}, parser, opts)
}

// Glob returns a provider for the files of one directory whose names match
// pattern's last element (filepath.Match syntax; the directory part is a
// plain path), read and merged in lexical order; names beginning with a
// dot are left out, as a shell leaves them, and so are directories (and
// links to them). A file appearing or disappearing is a change of the
// set; no file matching is an empty set.
// It does no I/O; a malformed pattern is reported by every read.
func Glob(pattern string, parser Parser, opts ...Option) *FileSet {
	dir, base := filepath.Split(pattern)
	if dir == "" {
		dir = "."
	}
	return newSet(filepath.Clean(pattern), &setSubject{abs: absPath(dir), pattern: base}, parser, opts)
}

// Dir returns a provider for every file below dir, in its subdirectories
// too: every key of a ConfigMap or Secret mounted there, whatever keys it
// has. Names are paths relative to dir ("tls.crt", "conf/app.yaml"), read
// and merged in lexical order. Names beginning with ".." are kubelet's own
// and are left out; names beginning with one dot are keys like any other
// (a Secret's .dockerconfigjson). A link to a directory is not followed,
// and a link that leads nowhere or out of dir is left out (checked as the
// files are listed). In a kubelet volume the files
// are those of the payload ..data leads to. A file appearing or
// disappearing is a change of the set; in a plain directory, one that
// appears in a subdirectory is seen at the next change or re-check. An
// empty directory is an empty set. It does no I/O.
func Dir(dir string, parser Parser, opts ...Option) *FileSet {
	return newSet(filepath.Clean(dir), &setSubject{abs: absPath(dir), tree: true}, parser, opts)
}

func newSet(path string, subj *setSubject, parser Parser, opts []Option) *FileSet {
	s := &FileSet{subj: subj, parser: parser}
	subj.path = path
	s.init(path, subj, opts, func(c *content, op fsnotify.Op) any {
		return SetEvent{Path: path, Files: c.names(), Generation: c.gen, Op: op}
	})
	subj.maxSize = s.t.opts.maxSize
	s.missing = subj.missing
	return s
}

// Read reads the set's files, parses each with the set's parser and merges
// them, later files over earlier ones. While a watch callback runs, it
// returns what the callback was fired for, without reading the files
// again. A file that fails to parse fails the read, naming the file.
func (s *FileSet) Read() (map[string]any, error) {
	r := s.read()
	if r.err != nil {
		return nil, r.err
	}
	if s.parser == nil {
		return nil, &fs.PathError{Op: "read", Path: s.t.path, Err: errNoParser}
	}
	out := make(map[string]any)
	for _, m := range r.c.files {
		mp, err := s.parser.Unmarshal(m.data)
		if err != nil {
			return nil, &fs.PathError{Op: "parse", Path: filepath.Join(s.subj.dirName(), m.name), Err: err}
		}
		merge(mp, out)
	}
	return out, nil
}

// ReadFiles reads the set's files as they are, unparsed: each file's
// content by its name in the set (for [Dir], its path below the
// directory). It is how a set of PEM files, tokens or keys is read: all of
// one generation, as Read reads them, and, while a watch callback runs,
// what the callback was fired for, without reading the files again. It
// needs no parser. The slices are the caller's own.
func (s *FileSet) ReadFiles() (map[string][]byte, error) {
	r := s.read()
	if r.err != nil {
		return nil, r.err
	}
	out := make(map[string][]byte, len(r.c.files))
	for _, m := range r.c.files {
		out[m.name] = bytes.Clone(m.data)
	}
	return out, nil
}

// ReadBytes is not supported: a set has no single content. koanf calls it
// for k.Load(set, parser) with a parser; load a set with a nil parser,
// k.Load(set, nil), so that koanf calls Read, which parses each file with
// the set's own parser.
func (s *FileSet) ReadBytes() ([]byte, error) {
	return nil, errSetBytes
}

// Watch watches the set and calls cb when its content changes, until
// [FileSet.Unwatch] is called. It is WatchWithContext with a context that
// is never done.
func (s *FileSet) Watch(cb func(event any, err error)) error {
	return s.WatchWithContext(context.Background(), cb)
}

// WatchWithContext watches the set as [File.WatchWithContext] watches a
// file, and calls cb(SetEvent, nil) once for each content of the whole set
// it has not delivered: a file changed, added or removed. While cb runs,
// Read returns what it was fired for. Like [File.WatchWithContext], it
// fails if the set's directory, or a file [Set] names, does not resolve
// now, unless the set has [WithWaitForPath].
func (s *FileSet) WatchWithContext(ctx context.Context, cb func(event any, err error)) error {
	return s.watch(ctx, cb)
}

// Unwatch stops the watch as [File.Unwatch] does: no callback starts after
// it returns, and it does not wait for a running one.
func (s *FileSet) Unwatch() error {
	s.unwatch()
	return nil
}

// Shutdown stops the watch and waits for it, as [File.Shutdown] does.
func (s *FileSet) Shutdown(ctx context.Context) error {
	return s.shutdown(ctx)
}

// Recheck makes the running watch look at the set now, as
// [File.Recheck] does for a file.
func (s *FileSet) Recheck() {
	s.recheck()
}

// Stats returns a snapshot of the set's watch, as [File.Stats] does.
func (s *FileSet) Stats() Stats {
	return s.snapshot()
}

// Misuse of a set, which a program fixes rather than handles: the texts
// name the right call.
var (
	// errSetBytes: k.Load(set, parser), the habit from single files, asks
	// for the set's bytes.
	errSetBytes = errors.New("keepwatch: a file set has no single content: load it with k.Load(set, nil)")
	// errNoParser: the set was made with a nil parser, and has none to
	// parse its files with.
	errNoParser = errors.New("keepwatch: a file set needs a parser: give one to Set or Glob")
)
