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

	linkBuf []byte // readlink's buffer, kept from one lookup to the next
}

// Resolve resolves the absolute path abs. It calls before, if not nil,
// with each path before it looks it up, so that a watcher can start caring
// about a name before it reads it: no change can fall between the look and
// the care.
func Resolve(abs string, before func(path string)) Chain {
	c := Chain{Names: make(map[string]bool)}
	cur, rest := root(abs)
	c.walk(abs, cur, rest, before, nil)
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
	return resume(abs, prev, changed, before, false)
}

// ResumeReusing is Resume, but builds the new resolution in prev's maps
// and slices, where Resume makes new ones: prev, and any Chain sharing
// them, is not to be used once it returns. It is for a watcher that keeps
// only the newest resolution of its path: a kubelet update then costs no
// copy of what did not change.
func ResumeReusing(abs string, prev *Chain, changed func(path string) bool, before func(path string)) Chain {
	return resume(abs, prev, changed, before, true)
}

func resume(abs string, prev *Chain, changed func(path string) bool, before func(path string), reuse bool) Chain {
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
	// The names looked up from k on, whose strings the new walk takes
	// where it looks the same names up again (a kubelet update's ..data),
	// kept aside before prev's steps are written over.
	var seen [8]string
	again := seen[:0]
	for _, later := range prev.steps[k:min(len(prev.steps), k+len(seen))] {
		again = append(again, later.path)
	}
	var c Chain
	if reuse {
		c = Chain{Names: prev.Names, Dirs: prev.Dirs[:st.dirs], Searched: prev.Searched[:st.searched],
			Hops: prev.Hops[:st.hops], steps: prev.steps[:k], linkBuf: prev.linkBuf}
		for _, later := range prev.steps[k:] {
			delete(c.Names, later.path)
		}
	} else {
		c = Chain{
			Names:    make(map[string]bool, len(prev.Names)),
			Dirs:     slices.Clone(prev.Dirs[:st.dirs]),
			Searched: slices.Clone(prev.Searched[:st.searched]),
			Hops:     slices.Clone(prev.Hops[:st.hops]),
			steps:    slices.Clone(prev.steps[:k]),
		}
	}
	for _, before := range c.steps {
		c.Names[before.path] = true // again, for a name a later step deleted too
	}
	c.walk(abs, st.cur, st.rest, before, again)
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
//
// again lists paths an earlier walk looked up, whose strings a name joined
// to its directory takes rather than make its own when they are the same.
func (c *Chain) walk(abs, cur string, rest []string, before func(path string), again []string) {
	for len(rest) > 0 {
		name := rest[0]
		if name == ".." {
			cur = filepath.Dir(cur)
			rest = rest[1:]
			continue
		}
		next := join(cur, name, again)
		c.steps = append(c.steps, step{path: next, cur: cur, rest: rest, dirs: len(c.Dirs), searched: len(c.Searched), hops: len(c.Hops)})
		rest = rest[1:]
		c.Names[next] = true
		if !slices.Contains(c.Searched, cur) {
			c.Searched = append(c.Searched, cur)
		}
		if before != nil {
			before(next)
		}
		// Only the file the path leads to is kept as a FileInfo; a name
		// on the way needs its kind alone, and a symlink when it was made.
		var info fs.FileInfo
		var mode fs.FileMode
		var mtime time.Time
		var err error
		if len(rest) == 0 {
			if info, err = os.Lstat(next); err == nil {
				mode, mtime = info.Mode(), info.ModTime()
			}
		} else {
			mode, mtime, err = lstatWay(next)
		}
		if err != nil {
			c.fail(cur, err)
			return
		}
		switch {
		case mode&fs.ModeSymlink != 0:
			c.addDir(cur)
			target, err := readlink(next, &c.linkBuf)
			if err == nil && len(c.Hops) == maxSymlinks {
				err = &fs.PathError{Op: "resolve", Path: abs, Err: syscall.ELOOP}
			}
			if err != nil {
				c.fail(cur, err)
				return
			}
			c.Hops = append(c.Hops, Hop{Link: next, Target: target, ModTime: mtime})
			var names []string
			switch {
			case filepath.IsAbs(target):
				cur, names = root(target)
			case target != "" && os.IsPathSeparator(target[0]): // Windows: rooted on the link's volume
				cur, names = filepath.VolumeName(cur)+string(filepath.Separator), split(target)
			case oneName(target):
				// A name beside the link, as ..data's target: one slice
				// for it and the names left, and no split.
				rest = append(append(make([]string, 0, 1+len(rest)), target), rest...)
				continue
			default:
				names = split(target)
			}
			rest = append(names, rest...)
		case len(rest) == 0:
			c.addDir(cur)
			c.Real, c.RealInfo = next, info
		case !mode.IsDir():
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

// join is filepath.Join(dir, name) for a clean dir and a name of one
// element, as a walk has them, taking the string of again that is the
// same, if one is, rather than make one.
func join(dir, name string, again []string) string {
	for _, p := range again {
		if rest, ok := strings.CutPrefix(p, dir); ok && strings.HasSuffix(rest, name) &&
			(len(rest) == len(name)+1 && os.IsPathSeparator(rest[0]) ||
				len(rest) == len(name) && dir != "" && os.IsPathSeparator(dir[len(dir)-1])) {
			return p
		}
	}
	return filepath.Join(dir, name)
}

// oneName reports whether a symlink's target is one name, to be looked up
// beside the link: no separator, and not "." or "..".
func oneName(target string) bool {
	return target != "" && target != "." && target != ".." &&
		!strings.ContainsFunc(target, func(r rune) bool { return r < utf8.RuneSelf && os.IsPathSeparator(uint8(r)) })
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

// Readlink returns the target of the symlink at path, as os.Readlink does,
// read into a buffer on the stack where it fits: a kubelet volume's ..data
// is read on the way to every callback there, and os.Readlink's buffer
// was an allocation more each time.
func Readlink(path string) (string, error) {
	var buf [256]byte
	b := buf[:]
	return readlink(path, &b)
}
