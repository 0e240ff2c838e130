// Package glob lists the members of a glob set: the files of one
// directory whose names match a pattern; and of a directory set: every
// file below a directory. The library reads a set by it; keepwatch doctor
// lists one by it; both so agree on what a set holds.
package glob

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Match reports whether name is a member's name: it matches pattern
// (filepath.Match syntax) and does not begin with a dot, as a shell leaves
// dotfiles out. A malformed pattern matches nothing.
func Match(pattern, name string) bool {
	ok, _ := filepath.Match(pattern, name)
	return ok && !strings.HasPrefix(name, ".")
}

// Members lists, in lexical order, the entries of dir whose names Match
// pattern, but directories and links to directories: a set is files, and
// a subdirectory its pattern matches (conf.d/old beside conf.d/*.yaml's
// files, say) is none of them. A link that leads nowhere is listed, to be
// found missing as a file would be. A malformed pattern is an error
// (filepath.ErrBadPattern), as is a directory that cannot be read.
func Members(dir, pattern string) ([]string, error) {
	if _, err := filepath.Match(pattern, ""); err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if Match(pattern, e.Name()) && !isDir(dir, e) {
			names = append(names, e.Name())
		}
	}
	return names, nil
}

func isDir(dir string, e fs.DirEntry) bool {
	if e.Type()&fs.ModeSymlink == 0 {
		return e.IsDir()
	}
	info, err := os.Stat(filepath.Join(dir, e.Name()))
	return err == nil && info.IsDir()
}

// Tree lists every file under dir, in its subdirectories too, as paths
// relative to dir in lexical order: the members of a directory set, every
// key of a mounted ConfigMap or Secret. Names beginning with ".." are
// kubelet's own (..data, ..data_tmp, its timestamped payloads) and are left
// out, with all below them. A link to a file below dir is a member; a link
// to a directory is not followed, and a link that leads nowhere, or out of
// dir, is left out: one stale entry does not fail the whole tree, and a
// directory another container writes cannot have the process read its
// other files (as koanf's k8smount, which reads through os.Root, cannot).
// A directory that cannot be read is an error.
func Tree(dir string) ([]string, error) {
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	err = filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if path == dir {
			return nil
		}
		if strings.HasPrefix(e.Name(), "..") {
			if e.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if e.IsDir() {
			return nil
		}
		if e.Type()&fs.ModeSymlink != 0 {
			info, err := os.Stat(path)
			if err != nil || info.IsDir() || !below(root, path) {
				return nil
			}
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		names = append(names, rel)
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	return names, nil
}

// below reports whether the link at path leads to a file below root, a
// directory with no links in its path.
func below(root, path string) bool {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return false
	}
	rel, err := filepath.Rel(root, real)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
