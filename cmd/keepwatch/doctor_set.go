package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	keepwatch "github.com/keepwatch/file"
	"github.com/keepwatch/file/internal/chain"
	"github.com/keepwatch/file/internal/mountinfo"
)

// set judges a set's directory the way file.Set and file.Glob read it: the
// directory's chain, kubelet volume or not, each member's chain and file,
// the whole set read by the library, then its mounts and filesystem as for
// a file.
func (r *report) set(t target, maxSize int64, table string) {
	c := r.chain(t.path)
	r.access(t.path, c.Real)
	home := c.Home()
	var files []string // each member as named and as read, for the mount check
	if r.isDir(&c) {
		home = c.Real
		base, kubelet := r.volume(c.Real)
		names, listed := r.members(t, c.Real, base, kubelet)
		before := r.count[problem]
		for _, n := range names {
			files = append(files, filepath.Join(t.path, n), r.member(c.Real, base, n, kubelet, maxSize))
		}
		if listed && len(names) > 0 && r.count[problem] == before {
			r.whole(t, len(names), maxSize)
		}
	}
	r.watchStarts(t.set(anyParser{}, r.probing()...))
	r.setMount(t.path, c.Real, files, table)
	r.filesystem(home)
	var read []string // the members as the set reads them
	for i := 1; i < len(files); i += 2 {
		if files[i] != "" {
			read = append(read, files[i])
		}
	}
	r.events(home, read)
}

// isDir reports whether a set's directory resolved to a directory, and
// says so if it did not.
func (r *report) isDir(c *chain.Chain) bool {
	if c.Err != nil {
		return false
	}
	info, err := os.Stat(c.Real)
	switch {
	case err != nil:
		r.add(problem, "set", "%v", err)
	case !info.IsDir():
		r.add(problem, "set", "%s is not a directory: a set's files are read from a directory", c.Real)
	}
	return err == nil && info.IsDir()
}

// volume tells a kubelet volume the way the library does, by a ..data link
// in the set's own directory to a generation beside it, and returns where
// the files are read from: that generation, or the directory.
func (r *report) volume(dir string) (base string, kubelet bool) {
	gen, err := os.Readlink(filepath.Join(dir, "..data"))
	switch {
	case err != nil:
		r.noDataLink(dir, err, ": a set rewritten file by file is read once it has been quiet for the quiet window (WithQuietWindow), so that no read mixes files from before and after an update")
		return dir, false
	case filepath.IsAbs(gen) || strings.ContainsRune(gen, filepath.Separator):
		r.add(warn, "layout", "..data -> %s is not kubelet's (its link names a directory beside it): read as a plain directory", gen)
		return dir, false
	case !r.dataLeads(dir, gen):
		return dir, false
	}
	r.add(ok, "layout", "kubelet volume (ConfigMap, Secret or projected): ..data -> %s; each read of the set resolves ..data once and reads every file from there, so a read never mixes two updates, and each update is read at once", gen)
	return filepath.Join(dir, gen), true
}

// members lists the set's files as the library would read them now, and
// reports whether it could.
func (r *report) members(t target, dir, base string, kubelet bool) ([]string, bool) {
	names, err := t.members(base)
	switch {
	case err != nil:
		r.add(problem, "members", "%v", err)
		return nil, false
	case t.kind == named:
		r.add(info, "members", "%d named, merged in this order: %s", len(names), strings.Join(names, ", "))
		if kubelet {
			for _, n := range names {
				if _, err := os.Lstat(filepath.Join(base, n)); errors.Is(err, fs.ErrNotExist) {
					r.add(problem, "members", "the volume has no key %s: its keys are %s", n, volumeKeys(dir))
				}
			}
		}
		return names, true
	case len(names) == 0:
		r.add(warn, "members", "no file matches %s: the set is empty until one appears", t.pattern)
		return names, true
	}
	where := "dotfiles left out"
	if kubelet {
		where = "the files ..data holds, dotfiles left out"
	}
	r.add(info, "members", "%d matching %s (%s), merged in this order: %s", len(names), t.pattern, where, strings.Join(names, ", "))
	if kubelet {
		// What is in the directory itself but not in the payload is never
		// read: a file copied in by hand, or a key's link kubelet has not
		// removed yet.
		if all, err := t.members(dir); err == nil {
			var extra []string
			for _, n := range all {
				if _, err := os.Lstat(filepath.Join(base, n)); err != nil {
					extra = append(extra, n)
				}
			}
			if len(extra) > 0 {
				r.add(warn, "members", "not in the payload ..data leads to, so not read: %s", strings.Join(extra, ", "))
			}
		}
	}
	return names, true
}

// member prints one member's chain and checks its file; it returns the
// path the set reads it from. In a kubelet volume the set reads
// ..data/<name>; the chain is shown from <name>, as a pod reads the key,
// when that leads to the same file.
func (r *report) member(dir, base, name string, kubelet bool, maxSize int64) string {
	r.add(info, "member", "%s", name)
	read := chain.Resolve(filepath.Join(base, name), nil)
	shown, note := read, ""
	if kubelet {
		via := chain.Resolve(filepath.Join(dir, name), nil)
		if via.Err == nil && via.Real == read.Real {
			shown = via
		} else {
			note = fmt.Sprintf("%s does not lead there; the set reads it through ..data all the same", filepath.Join(dir, name))
		}
	}
	r.hops(&shown)
	if note != "" && read.Err == nil {
		r.add(info, "", "%s", note)
	}
	r.file(read.Real, maxSize)
	r.access(filepath.Join(dir, name), read.Real)
	r.writers(read.Real)
	return read.Real
}

// whole reads the set with the library, as a watch reads it: every member
// there and regular, all of them together within the size limit.
func (r *report) whole(t target, n int, maxSize int64) {
	s := t.set(anyParser{}, keepwatch.WithMaxSize(maxSize))
	if _, err := s.Read(); err != nil {
		r.add(problem, "set", "%v", err)
		return
	}
	gen := ""
	if g := s.Stats().Generation; g != "" {
		gen = ", from " + g
	}
	r.add(ok, "set", "reads as one: %d files, %d bytes in all (-max-size %d)%s", n, s.Stats().Size, maxSize, gen)
}

// setMount checks for a subPath mount of the set's directory (or one above
// it), and for any of its files mounted on its own.
func (r *report) setMount(abs, dir string, files []string, table string) {
	mounts, found := r.mountTable(table)
	if !found {
		return
	}
	bad := r.dirMount(mounts, abs, dir)
	for i := 0; i+1 < len(files); i += 2 {
		if r.fileMount(mounts, files[i], files[i+1]) {
			bad = true
		}
	}
	if !bad {
		r.add(ok, fileMountCheck, "no file of the set mounted on its own, nor the directory with a subPath")
	}
	r.containing(mounts, abs)
}

// dirMount reports a directory that kubelet mounted for a subPath (it, or a
// directory above it), and whether there is one.
func (r *report) dirMount(mounts []mountinfo.Mount, paths ...string) bool {
	for _, p := range paths {
		if p == "" {
			continue
		}
		if m, found := mountinfo.Containing(mounts, p); found && mountinfo.IsSubPath(m) {
			r.add(problem, "subPath", "%s is a subPath mount of a directory (from %s), which kubelet never updates in a running pod; mount the volume itself", m.Point, m.Root)
			return true
		}
	}
	return false
}

// anyParser accepts any content: the doctor judges whether a set can be
// read, not what its files say.
type anyParser struct{}

func (anyParser) Unmarshal([]byte) (map[string]any, error) { return map[string]any{}, nil }
