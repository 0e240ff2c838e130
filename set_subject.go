package file

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/keepwatch/file/internal/chain"
	"github.com/keepwatch/file/internal/decide"
	"github.com/keepwatch/file/internal/glob"
	"github.com/keepwatch/file/internal/osfile"
)

// setSubject is a set of files in one directory.
type setSubject struct {
	path    string   // the directory or glob as given, cleaned: names the set
	abs     string   // the directory, absolute, not cleaned
	names   []string // the files, in merge order; nil for a glob or a tree
	pattern string   // the glob the files' names match; "" for named files
	tree    bool     // every file below the directory (Dir)
	maxSize int64    // for all the files together
}

// dirName is the set's directory as given, to name its files in errors.
func (s *setSubject) dirName() string {
	if s.pattern == "" {
		return s.path
	}
	return filepath.Dir(s.path)
}

func (s *setSubject) matches(name string) bool {
	if s.tree {
		return !strings.HasPrefix(name, "..")
	}
	return glob.Match(s.pattern, name)
}

func (s *setSubject) paths() []string {
	var out []string
	for _, n := range s.names {
		out = append(out, filepath.Join(s.abs, n))
	}
	return out
}

// empty reports whether the set read as nothing, or with a file of it
// found empty: that is more often the middle of an update (a file emptied
// to be written again, or caught between a writer's truncation and its
// write) than its end, and is confirmed before it is accepted, as an
// empty file is.
func (s *setSubject) empty(c *content) bool {
	return len(c.files) == 0 || slices.ContainsFunc(c.files, func(m member) bool { return len(m.data) == 0 })
}

// place is where a set is read from now: its directory, and in a kubelet
// volume, the generation's directory that ..data leads to.
type place struct {
	dir  string // the set's directory, symlink-free
	gen  string // the target of ..data; "" outside a kubelet volume
	base string // where the files are read: dir, or the generation's directory
}

// locate finds where the set is read from now.
func (s *setSubject) locate(c *chain.Chain) (place, error) {
	if c.Err != nil {
		return place{}, osfile.WithPath(c.Err, s.dirName())
	}
	info, err := os.Stat(c.Real)
	if err != nil {
		return place{}, osfile.WithPath(err, s.dirName())
	}
	if !info.IsDir() {
		return place{}, &fs.PathError{Op: "read", Path: s.dirName(), Err: syscall.ENOTDIR}
	}
	p := place{dir: c.Real, base: c.Real}
	if gen := kubeletGeneration(filepath.Join(c.Real, dataLink)); isPayload(gen) {
		p.gen, p.base = gen, filepath.Join(c.Real, gen)
	}
	return p, nil
}

// members lists the set's files at p: the named ones, or those the glob
// matches or the tree holds, in lexical order.
func (s *setSubject) members(p place) ([]string, error) {
	if s.tree {
		names, err := glob.Tree(p.base)
		if err != nil {
			// Named as the set's directory is, down to where it failed.
			rel, rerr := filepath.Rel(p.base, pathOfError(err))
			if rerr != nil {
				rel = "."
			}
			return nil, osfile.WithPath(err, filepath.Join(s.dirName(), rel))
		}
		return names, nil
	}
	if s.pattern == "" {
		return s.names, nil
	}
	names, err := glob.Members(p.base, s.pattern)
	switch {
	case errors.Is(err, filepath.ErrBadPattern):
		return nil, &fs.PathError{Op: "glob", Path: s.path, Err: err}
	case err != nil:
		return nil, osfile.WithPath(err, s.dirName())
	}
	return names, nil
}

func (s *setSubject) resolveAgain(before func(string), _ *resolution, _ map[string]bool) resolution {
	return s.resolve(before, nil, nil)
}

func (s *setSubject) resolve(before func(string), _ *resolution, _ map[string]bool) resolution {
	c := chain.Resolve(s.abs, before)
	v := resolution{Resolution: decide.Resolution{Names: c.Names, Dirs: c.Dirs, Searched: c.Searched}}
	v.setHome(c.Home())
	p, err := s.locate(&c)
	if err != nil {
		return v
	}
	v.setHome(p.dir)
	v.Dirs = appendNew(v.Dirs, p.dir) // its entries come and go
	note := func(path string) {
		if before != nil {
			before(path)
		}
		v.Names[path] = true
	}
	note(filepath.Join(p.dir, dataLink))
	if p.gen != "" {
		// A kubelet volume: updates arrive as ..data swaps, read at once.
		v.DataLink = filepath.Join(p.dir, dataLink)
		note(p.base)
		v.Dirs = appendNew(v.Dirs, p.base)
	} else if s.pattern != "" || s.tree {
		note(p.dir + string(filepath.Separator)) // every entry: files come and go
		v.setEntries(p.dir, s.matches)
	}
	names, _ := s.members(p)
	for _, n := range names {
		note(filepath.Join(p.dir, n))
		path := filepath.Join(p.base, n)
		note(path)
		if info, err := os.Lstat(path); err == nil && info.Mode()&fs.ModeSymlink == 0 {
			// A file, as in a kubelet payload: nothing more to follow but
			// its directory, which a name with a slash puts below the set's.
			v.Files = appendNew(v.Files, path)
			v.Dirs = appendNew(v.Dirs, filepath.Dir(path))
			continue
		}
		// A symlink, or missing for now: resolved, it names the
		// directories to watch, down to where a missing one would appear
		// (a name in a subdirectory too), and no file to watch by itself
		// until there is one: a watch on a missing file would fail, and a
		// failed watch ends the loop.
		mc := chain.Resolve(path, before)
		for name := range mc.Names {
			v.Names[name] = true
		}
		for _, d := range mc.Dirs {
			v.Dirs = appendNew(v.Dirs, d)
		}
		for _, d := range mc.Searched {
			v.Searched = appendNew(v.Searched, d)
		}
		if mc.Real != "" {
			v.Files = appendNew(v.Files, mc.Real)
		}
	}
	return v
}

func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

// read reads the set's files, all of them from one place: in a kubelet
// volume, the payload ..data names (see generation.go).
func (s *setSubject) read(why decide.Reason, _ *resolution, probe, _ bool) reading {
	c := chain.Resolve(s.abs, nil)
	p, err := s.locate(&c)
	if err != nil {
		return reading{why: why, err: err}
	}
	if p.gen == "" {
		return s.readAt(p, why, probe)
	}
	link := filepath.Join(p.dir, dataLink)
	return readGeneration(link, p.gen, func(gen string) reading {
		r := s.readAt(place{dir: p.dir, gen: gen, base: filepath.Join(p.dir, gen)}, why, probe)
		if s.names == nil && r.err == nil && kubeletGeneration(link) != gen {
			// A set that lists its files (a glob, a tree) finds none
			// missing when kubelet removes the payload under its listing:
			// it lists fewer. Only a payload ..data still names after the
			// read was whole throughout it, since kubelet removes one only
			// once ..data names another, and never names it again.
			return reading{why: why, err: &fs.PathError{Op: "read", Path: s.dirName(), Err: fs.ErrNotExist}}
		}
		return r
	})
}

// readAt reads the set's files where p says they are. With probe, what
// the kernel says of their writers is whether any of them has one (or not
// known, if it does not say of one).
func (s *setSubject) readAt(p place, why decide.Reason, probe bool) reading {
	names, err := s.members(p)
	if err != nil {
		return reading{why: why, err: err}
	}
	out := content{gen: p.gen}
	if probe {
		out.writers = decide.WritersNone
	}
	if p.gen != "" {
		out.vol = p.dir
	}
	if info, err := os.Stat(p.dir); err == nil {
		out.sig = signOf(0, "", info)
	}
	h := sha256.New()
	left := s.maxSize
	for _, n := range names {
		f, err := readFile(filepath.Join(p.base, n), filepath.Join(s.dirName(), n), left, probe)
		if err != nil {
			return reading{why: why, err: err}
		}
		left -= int64(len(f.data))
		out.files = append(out.files, member{name: n, data: f.data})
		if probe && out.writers != decide.WritersOpen && f.writers != decide.WritersNone {
			out.writers = f.writers
		}
		if f.mtime.After(out.mtime) {
			out.mtime = f.mtime
		}
		out.sig = signOf(out.sig, n, f.info)
		var size [8]byte
		binary.LittleEndian.PutUint64(size[:], uint64(len(f.data)))
		h.Write([]byte(n))
		h.Write(size[:])
		h.Write(f.data)
	}
	copy(out.sum[:], h.Sum(nil))
	if out.sig == 0 {
		out.sig = 1 // read fine: never zero
	}
	return reading{why: why, c: out}
}

// stamp is zero: a set's reads are judged with the events queued after
// them (decide's vouched), not by stamps.
func (s *setSubject) stamp() decide.Stamp { return 0 }

func (s *setSubject) stat() decide.Signature {
	c := chain.Resolve(s.abs, nil)
	p, err := s.locate(&c)
	if err != nil {
		return 0
	}
	names, err := s.members(p)
	if err != nil {
		return 0
	}
	info, err := os.Stat(p.dir)
	if err != nil {
		return 0
	}
	sig := signOf(0, "", info)
	for _, n := range names {
		info, err := os.Stat(filepath.Join(p.base, n))
		if err != nil {
			return 0
		}
		sig = signOf(sig, n, info)
	}
	return sig
}

// pathOfError is the path an *fs.PathError names, "" for another error.
func pathOfError(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Path
	}
	return ""
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
