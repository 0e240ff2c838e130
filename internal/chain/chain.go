// Package chain resolves a path the way the kernel does, one name at a
// time, and records what the resolution depends on. The library watches
// what it records; keepwatch doctor prints it. Both use this one resolver,
// so the doctor can never disagree with the watch.
package chain

import (
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"
)

// maxSymlinks is Linux's limit on symlinks followed in one lookup.
const maxSymlinks = 40

// Hop is one symlink followed on the way to the file.
type Hop struct {
	Link    string    // the symlink, symlink-free up to its own name
	Target  string    // what it points to, as stored
	ModTime time.Time // when the link was made (its own, not its target's)
}

// Chain is what a path resolves to right now, and what that depends on.
//
// Every name the resolution looks up goes into Names: a create, remove or
// rename of one of them can change where the path leads. The directory
// holding a symlink that was followed, the one holding the final file, and
// the one where a lookup failed go into Dirs: watching those sees a
// ConfigMap's ..data swap, a retargeted link, an edit to a link's target in
// another directory, and a missing file or directory coming back. Every
// directory a name was looked up in goes into Searched: a plain ancestor
// renamed or exchanged changes where the path leads too, and only watching
// all of them sees that.
type Chain struct {
	Real     string          // symlink-free path of the file; "" if resolution failed
	RealInfo fs.FileInfo     // its lstat, when resolution looked it up
	Dirs     []string        // directories to watch, symlink-free
	Searched []string        // every directory a name was looked up in, Dirs among them
	Names    map[string]bool // every path looked up, symlink-free
	Hops     []Hop           // the symlinks followed, in order
	Err      error           // why resolution failed, if it did

	steps []step // every name looked up, in order: see Resume
}

// Resolve resolves the absolute path abs. It calls before, if not nil,
// with each path before it looks it up, so that a watcher can start caring
// about a name before it reads it: no change can fall between the look and
// the care.
func Resolve(abs string, before func(path string)) Chain {
	c := Chain{Names: make(map[string]bool)}
	cur, rest := root(abs)
	c.walk(abs, cur, rest, before)
	return c
}

// Resume resolves abs again, as Resolve does, but takes up prev's walk, a
// resolution of the same abs, at the first name it looked up that changed
// reports; what prev found before that name stands. A watcher whose
// events say which names changed since prev so looks up only those and
// what follows them: on a kubelet update, the ..data link and the payload,
// not every directory from the root. When nothing prev looked up changed,
// or only the file it led to, which is still there and not a symlink, it
// returns prev as it is but for RealInfo, sharing its maps and slices:
// neither is to be changed.
func Resume(abs string, prev *Chain, changed func(path string) bool, before func(path string)) Chain {
	k := slices.IndexFunc(prev.steps, func(st step) bool { return changed(st.path) })
	if k < 0 {
		if prev.Err == nil {
			return *prev // nothing it looked up changed
		}
		k = len(prev.steps) - 1 // it failed at its last look: look again
	}
	if k < 0 {
		return Resolve(abs, before)
	}
	if c, ok := resumeFile(prev, k, before); ok {
		return c
	}
	st := prev.steps[k]
	c := Chain{
		Names:    make(map[string]bool, len(prev.Names)),
		Dirs:     slices.Clone(prev.Dirs[:st.dirs]),
		Searched: slices.Clone(prev.Searched[:st.searched]),
		Hops:     slices.Clone(prev.Hops[:st.hops]),
		steps:    slices.Clone(prev.steps[:k]),
	}
	for _, before := range c.steps {
		c.Names[before.path] = true
	}
	c.walk(abs, st.cur, st.rest, before)
	return c
}

// resumeFile takes up prev's walk at step k when that is its last, the file
// it led to: a write in place, or a file renamed over it, changes nothing
// else (the common case, which a walk would rebuild every map and slice
// for). Whatever is there now, if not a symlink, ends the walk as it
// would. It reports false, having looked up nothing, if step k is not the
// file's, and, having looked it up, if it is gone or a symlink now: a walk
// then finds where the path leads.
func resumeFile(prev *Chain, k int, before func(path string)) (Chain, bool) {
	st := prev.steps[k]
	if k != len(prev.steps)-1 || prev.Err != nil || st.path != prev.Real {
		return Chain{}, false
	}
	if before != nil {
		before(st.path)
	}
	info, err := os.Lstat(st.path)
	if err != nil || info.Mode()&fs.ModeSymlink != 0 {
		return Chain{}, false
	}
	c := *prev
	c.RealInfo = info
	return c, true
}

// step is one name a resolution looked up, and where its walk stood then:
// what Resume needs to take the walk up there.
type step struct {
	path                 string   // the name looked up
	cur                  string   // the directory it was looked up in
	rest                 []string // the names left to look up, its own first
	dirs, searched, hops int      // how many Dirs, Searched and Hops were found before it
}

// walk looks up rest, one name at a time, from cur.
func (c *Chain) walk(abs, cur string, rest []string, before func(path string)) {
	for len(rest) > 0 {
		name := rest[0]
		if name == ".." {
			cur = filepath.Dir(cur)
			rest = rest[1:]
			continue
		}
		next := filepath.Join(cur, name)
		c.steps = append(c.steps, step{path: next, cur: cur, rest: rest, dirs: len(c.Dirs), searched: len(c.Searched), hops: len(c.Hops)})
		rest = rest[1:]
		c.Names[next] = true
		if !slices.Contains(c.Searched, cur) {
			c.Searched = append(c.Searched, cur)
		}
		if before != nil {
			before(next)
		}
		info, err := os.Lstat(next)
		if err != nil {
			c.fail(cur, err)
			return
		}
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			c.addDir(cur)
			target, err := os.Readlink(next)
			if err == nil && len(c.Hops) == maxSymlinks {
				err = &fs.PathError{Op: "resolve", Path: abs, Err: syscall.ELOOP}
			}
			if err != nil {
				c.fail(cur, err)
				return
			}
			c.Hops = append(c.Hops, Hop{Link: next, Target: target, ModTime: info.ModTime()})
			var names []string
			switch {
			case filepath.IsAbs(target):
				cur, names = root(target)
			case target != "" && os.IsPathSeparator(target[0]): // Windows: rooted on the link's volume
				cur, names = filepath.VolumeName(cur)+string(filepath.Separator), split(target)
			default:
				names = split(target)
			}
			rest = append(names, rest...)
		case len(rest) == 0:
			c.addDir(cur)
			c.Real, c.RealInfo = next, info
		case !info.IsDir():
			c.fail(cur, &fs.PathError{Op: "resolve", Path: next, Err: syscall.ENOTDIR})
			return
		default:
			cur = next
		}
	}
	if c.Real == "" { // the path names a directory, such as "/"
		c.Real = cur
		c.addDir(filepath.Dir(cur))
	}
}

// Same reports whether two resolutions lead the same way through the same
// names.
func (c *Chain) Same(o *Chain) bool {
	return c.Real == o.Real && slices.Equal(c.Dirs, o.Dirs) && slices.Equal(c.Searched, o.Searched) &&
		maps.Equal(c.Names, o.Names)
}

// Home is the directory of the file, or where resolution stopped: the
// filesystem there is the one whose events matter.
func (c *Chain) Home() string {
	if c.Real != "" {
		return filepath.Dir(c.Real)
	}
	if len(c.Dirs) > 0 {
		return c.Dirs[len(c.Dirs)-1]
	}
	return string(filepath.Separator)
}

func (c *Chain) addDir(dir string) {
	if !slices.Contains(c.Dirs, dir) {
		c.Dirs = append(c.Dirs, dir)
	}
}

func (c *Chain) fail(dir string, err error) {
	c.addDir(dir)
	c.Err = err
}

// root splits an absolute path into the directory its lookup starts from,
// "/" (on Windows its volume's root: `C:\` or `\\host\share\`), and the
// names to look up from there.
func root(abs string) (string, []string) {
	vol := filepath.VolumeName(abs)
	return vol + string(filepath.Separator), split(abs[len(vol):])
}

// split splits a path into its names, at every separator the OS has (both
// `\` and `/` on Windows), dropping empty ones and ".".
func split(p string) []string {
	parts := strings.FieldsFunc(p, func(r rune) bool { return r < utf8.RuneSelf && os.IsPathSeparator(uint8(r)) })
	return slices.DeleteFunc(parts, func(s string) bool { return s == "." })
}
