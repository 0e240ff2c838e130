package file

import (
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// maxSymlinks is Linux's limit on symlinks followed in one lookup.
const maxSymlinks = 40

// chain is what a path resolves to right now, and what that depends on.
//
// Resolution walks the path one name at a time, following symlinks the way
// the kernel does. Every name it looks up goes into names: a create, remove
// or rename of one of them can change where the path leads. The directory
// holding a symlink that was followed, the one holding the final file, and
// the one where a lookup failed go into dirs: watching those sees a
// ConfigMap's ..data swap, a retargeted link, an edit to a link's target in
// another directory, and a missing file or directory coming back.
type chain struct {
	real  string          // symlink-free path of the file; "" if resolution failed
	dirs  []string        // directories to watch, symlink-free
	names map[string]bool // every path looked up, symlink-free
	err   error           // why resolution failed, if it did
}

// relevant reports whether an event on name can change what the path
// resolves to or what it contains.
func (c *chain) relevant(name string) bool {
	return c.names[name] || slices.Contains(c.dirs, name)
}

// resolve resolves the absolute path abs. It calls want, if not nil, with
// each path before looking it up, so that a watcher can start caring about
// a name before it reads it.
func resolve(abs string, want func(path string)) chain {
	c := chain{names: make(map[string]bool)}
	cur := string(filepath.Separator)
	rest := splitPath(abs)
	links := 0
	for len(rest) > 0 {
		name := rest[0]
		rest = rest[1:]
		if name == ".." {
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, name)
		c.names[next] = true
		if want != nil {
			want(next)
		}
		info, err := os.Lstat(next)
		if err != nil {
			c.fail(cur, err)
			return c
		}
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			c.watch(cur)
			links++
			target, err := os.Readlink(next)
			if err == nil && links > maxSymlinks {
				err = &fs.PathError{Op: "resolve", Path: abs, Err: syscall.ELOOP}
			}
			if err != nil {
				c.fail(cur, err)
				return c
			}
			if filepath.IsAbs(target) {
				cur = string(filepath.Separator)
			}
			rest = append(splitPath(target), rest...)
		case len(rest) == 0:
			c.watch(cur)
			c.real = next
		case !info.IsDir():
			c.fail(cur, &fs.PathError{Op: "resolve", Path: next, Err: syscall.ENOTDIR})
			return c
		default:
			cur = next
		}
	}
	if c.real == "" { // the path names a directory, such as "/"
		c.real = cur
		c.watch(filepath.Dir(cur))
	}
	return c
}

// same reports whether two resolutions lead the same way through the same
// names.
func (c *chain) same(o *chain) bool {
	return c.real == o.real && slices.Equal(c.dirs, o.dirs) && maps.Equal(c.names, o.names)
}

// home is the directory of the file, or where resolution stopped: the
// filesystem there is the one whose events matter.
func (c *chain) home() string {
	if c.real != "" {
		return filepath.Dir(c.real)
	}
	if len(c.dirs) > 0 {
		return c.dirs[len(c.dirs)-1]
	}
	return string(filepath.Separator)
}

func (c *chain) watch(dir string) {
	if !slices.Contains(c.dirs, dir) {
		c.dirs = append(c.dirs, dir)
	}
}

func (c *chain) fail(dir string, err error) {
	c.watch(dir)
	c.err = err
}

// splitPath splits a path into its names, dropping empty ones and ".".
func splitPath(p string) []string {
	parts := strings.Split(p, string(filepath.Separator))
	return slices.DeleteFunc(parts, func(s string) bool { return s == "" || s == "." })
}
