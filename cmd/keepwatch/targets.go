package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	keepwatch "github.com/keepwatch/file"
	globset "github.com/keepwatch/file/internal/glob"
)

const pathsHelp = `Each PATH is taken the way the library reads it:
  a file                      as file.Provider(PATH)
  a directory                 as file.Glob(PATH/*): its files, no dotfiles;
                              in a kubelet volume, the ones ..data holds
  a glob ('conf.d/*.yaml')    as file.Glob(PATH); quote it, or the shell
                              expands it into files taken one by one
  -set DIR NAME...            the files of one file.Set(DIR, NAMES), read
                              as one (several keys of one ConfigMap)`

// kind is how the library reads a target.
type kind int

const (
	single kind = iota // one file: file.Provider
	glob               // a directory's files matching a pattern: file.Glob
	named              // named files of a directory: file.Set
)

// A target is what one argument names, as the library would read it.
type target struct {
	arg     string   // as given: names the target in the output
	kind    kind     //
	dir     bool     // given as a directory, read as its files
	path    string   // absolute: the file, or the set's directory
	pattern string   // a glob's last element; "" otherwise
	names   []string // a named set's files, relative to path
}

// call is the library call that reads the target, as Go.
func (t target) call() string {
	switch t.kind {
	case glob:
		return fmt.Sprintf("file.Glob(%q)", filepath.Join(t.path, t.pattern))
	case named:
		q := make([]string, len(t.names))
		for i, n := range t.names {
			q[i] = fmt.Sprintf("%q", n)
		}
		return fmt.Sprintf("file.Set(%q, []string{%s})", t.path, strings.Join(q, ", "))
	}
	return fmt.Sprintf("file.Provider(%q)", t.path)
}

// what says what the argument was taken for, and how it is read.
func (t target) what() string {
	switch {
	case t.kind == named:
		return "the set " + t.call()
	case t.kind == single:
		return "a file, read as " + t.call()
	case t.dir:
		return "a directory, read as the set " + t.call()
	}
	return "a glob, read as the set " + t.call()
}

// provider is what watch needs of a File or a FileSet.
type provider interface {
	WatchWithContext(ctx context.Context, cb func(event any, err error)) error
	Shutdown(ctx context.Context) error
	Stats() keepwatch.Stats
}

// set returns the library's reader of a set target, with parser.
func (t target) set(parser keepwatch.Parser, opts ...keepwatch.Option) *keepwatch.FileSet {
	if t.kind == named {
		return keepwatch.Set(t.path, t.names, parser, opts...)
	}
	return keepwatch.Glob(filepath.Join(t.path, t.pattern), parser, opts...)
}

// members lists the files a set target reads in base (the set's directory,
// or in a kubelet volume the generation ..data leads to), as the library
// lists them: the names given, or the files matching the glob but
// dotfiles, in lexical order (internal/glob).
func (t target) members(base string) ([]string, error) {
	if t.kind == named {
		return t.names, nil
	}
	names, err := globset.Members(base, t.pattern)
	if errors.Is(err, filepath.ErrBadPattern) {
		return nil, fmt.Errorf("glob %s: %w", t.pattern, err)
	}
	return names, err
}

// parseTargets parses a command's flags and returns its targets: one per
// PATH, or the one set -set names.
func parseTargets(fs *flag.FlagSet, setDir *string, args []string, stderr io.Writer) ([]target, error) {
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, err
		}
		return nil, errUsage
	}
	if fs.NArg() == 0 {
		what := "PATH"
		if *setDir != "" {
			what = "NAME of the set's files"
		}
		fmt.Fprintf(stderr, "keepwatch %s: want at least one %s\n", fs.Name(), what)
		fs.Usage()
		return nil, errUsage
	}
	if *setDir != "" {
		t, err := namedSet(*setDir, fs.Args())
		if err != nil {
			fmt.Fprintf(stderr, "keepwatch %s: %v\n", fs.Name(), err)
			return nil, errUsage
		}
		return []target{t}, nil
	}
	var out []target
	for _, arg := range fs.Args() {
		t, err := targetOf(arg)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// targetOf tells what a PATH argument is: a directory or a glob is a set,
// anything else a file (perhaps missing for now).
func targetOf(arg string) (target, error) {
	abs, err := filepath.Abs(arg)
	if err != nil {
		return target{}, err
	}
	t := target{arg: arg, kind: single, path: abs}
	if strings.HasSuffix(arg, string(filepath.Separator)) || strings.HasSuffix(arg, "/") {
		// A directory, perhaps missing for now.
		t.kind, t.dir, t.pattern = glob, true, "*"
		return t, nil
	}
	if info, err := os.Stat(abs); err == nil {
		if info.IsDir() {
			t.kind, t.dir, t.pattern = glob, true, "*"
		}
		return t, nil
	}
	if dir, base := filepath.Split(abs); strings.ContainsAny(base, `*?[`) {
		t.kind, t.path, t.pattern = glob, filepath.Clean(dir), base
	}
	return t, nil
}

// namedSet is the target of -set DIR NAME...: names are relative to DIR,
// as file.Set takes them; a path inside DIR is taken for its name there.
func namedSet(dir string, names []string) (target, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return target{}, err
	}
	t := target{arg: dir, kind: named, path: abs}
	for _, n := range names {
		if filepath.IsAbs(n) {
			rel, err := filepath.Rel(abs, n)
			if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
				return target{}, fmt.Errorf("-set %s: %s is not in that directory: name the set's files relative to it", dir, n)
			}
			n = rel
		}
		t.names = append(t.names, filepath.Clean(n))
	}
	return t, nil
}
