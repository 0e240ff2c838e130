// Package glob lists the members of a glob set: the files of one
// directory whose names match a pattern. The library reads a set by it;
// keepwatch doctor lists one by it; both so agree on what a set holds.
package glob

import (
	"io/fs"
	"os"
	"path/filepath"
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
