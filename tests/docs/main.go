// Command docs compiles every Go code block of the project's Markdown
// files, so that what a reader copies builds as shown. make test runs it.
//
// Run it from this directory:
//
//	go run .                      README.md and docs/*.md of the repository
//	go run . ../../README.new.md  the files named instead
//
// A Go block is a fenced code block whose info string starts with go (or
// golang). Each must be one of two things.
//
// A whole file: its package clause first (comments and build constraints
// may come before it), then its imports, then its code. A block of
// package main is a program, and needs its func main: it is compiled as
// one, and not linked (the link finds nothing in plain Go that the
// compiler does not, and took half the check's time); any other package
// is compiled as a package (an Example, a test helper). Each block is
// a file of its own and shares nothing with the others.
//
// A fragment, marked by the word fragment after the language:
//
//	```go fragment
//	import "github.com/keepwatch/file"
//	```
//
// GitHub and pkg.go.dev show it as any Go block; the check skips it. Mark
// so what is not meant to compile on its own: the one-line import swap, a
// call shown inside a function, an excerpt of a larger program.
//
// Anything else fails: declarations or statements without a package
// clause. The check supplies no package clause or imports of its own: a
// block that compiles only with imports its reader cannot see is the very
// mistake it exists to catch (issue 21: env.Opt needs providers/env/v2,
// which no reader of the block could tell).
//
// The blocks are compiled in this module, whose go.mod requires the
// library (this working tree's, through go.work) and the modules the docs
// import (imports.go lists them): for a doc to import another module, add
// a package of it to imports.go and run make tidy (tests/tidy.sh
// tests/docs). Nothing enters the library's own go.mod.
//
// A failure names the Markdown file, the line in it, the block and the
// compiler's message, as
//
//	README.md:61:14: undefined: checkPolicy (go block at line 54)
//
// The command exits 1 if a block fails and 2 on a usage error.
// -allow-broken names files (as shown, relative to the repository) whose
// failures are printed but do not fail the check: a switch for a file
// known to be broken while it is rewritten.
package main

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// thisModule is this checker's module path: the blocks are compiled as
// packages under it.
const thisModule = "github.com/keepwatch/file/tests/docs"

// fragmentWord marks a block that is not compiled.
const fragmentWord = "fragment"

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("docs", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: go run . [flags] [FILE.md...]\n\nCompiles the Go blocks of FILE.md..., by default the repository's README.md and docs/*.md.\n\nFlags:")
		fs.PrintDefaults()
	}
	root := fs.String("root", "../..", "the repository: its README.md and docs/*.md are checked when no FILE is named, and files are shown relative to it")
	allow := fs.String("allow-broken", "", "comma-separated files, as shown, whose failures are printed but do not fail the check")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if err := runCheck(*root, fs.Args(), splitList(*allow), stdout); err != nil {
		fmt.Fprintln(stderr, "docs:", err)
		if errors.Is(err, errFailed) {
			return 1
		}
		return 2
	}
	return 0
}

// errFailed is a check that found blocks that do not compile.
var errFailed = errors.New("blocks fail to compile")

func runCheck(root string, args, allowed []string, out io.Writer) error {
	modDir, err := moduleDir()
	if err != nil {
		return err
	}
	files, err := docFiles(root, args)
	if err != nil {
		return err
	}
	var blocks []block
	for _, f := range files {
		doc, err := os.ReadFile(f.path)
		if err != nil {
			return err
		}
		blocks = append(blocks, goBlocks(f.shown, string(doc))...)
	}
	for i := range blocks {
		blocks[i].seq = i
	}
	fails, err := check(modDir, blocks)
	if err != nil {
		return err
	}
	slices.SortStableFunc(fails, func(a, b failure) int {
		return cmp.Or(cmp.Compare(a.b.seq, b.b.seq), cmp.Compare(a.line, b.line), cmp.Compare(a.col, b.col))
	})
	return summarize(out, files, blocks, fails, allowed)
}

// A failure is a message about a block, at a line and column of its
// Markdown file (column 0: none).
type failure struct {
	b         *block
	line, col int
	msg       string
}

func (f failure) String() string {
	pos := fmt.Sprintf("%s:%d", f.b.file, f.line)
	if f.col > 0 {
		pos += ":" + strconv.Itoa(f.col)
	}
	return fmt.Sprintf("%s: %s (go block at line %d)", pos, f.msg, f.b.line)
}

// summarize prints the failures, then one line of totals, and returns
// errFailed if a file not allowed to be broken has a failure.
func summarize(out io.Writer, files []docFile, blocks []block, fails []failure, allowed []string) error {
	failed := map[*block]bool{}
	for _, f := range fails {
		fmt.Fprintln(out, f)
		failed[f.b] = true
	}
	fragments := 0
	var broken, tolerated []string
	for i := range blocks {
		b := &blocks[i]
		switch {
		case b.fragment:
			fragments++
		case failed[b] && slices.Contains(allowed, b.file):
			tolerated = appendNew(tolerated, b.file)
		case failed[b]:
			broken = appendNew(broken, b.file)
		}
	}
	var names []string
	for _, f := range files {
		names = append(names, f.shown)
	}
	fmt.Fprintf(out, "docs: %d Go blocks, %d fragments not compiled, %d failing, in %s\n",
		len(blocks), fragments, len(failed), strings.Join(names, ", "))
	if len(tolerated) > 0 {
		fmt.Fprintf(out, "docs: the failures in %s do not fail the check (-allow-broken)\n", strings.Join(tolerated, ", "))
	}
	if len(broken) > 0 {
		return fmt.Errorf("%w: in %s", errFailed, strings.Join(broken, ", "))
	}
	return nil
}

// A docFile is a Markdown file to check.
type docFile struct {
	path  string // to read it
	shown string // in messages: relative to the repository when in it
}

// docFiles returns the files named, or the repository's README.md and
// docs/*.md (docs/ may not exist).
func docFiles(root string, args []string) ([]docFile, error) {
	if len(args) == 0 {
		args = []string{filepath.Join(root, "README.md")}
		more, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
		if err != nil {
			return nil, err
		}
		args = append(args, more...)
	}
	absRoot, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	var out []docFile
	for _, a := range args {
		shown := a
		if abs, err := filepath.Abs(a); err == nil {
			if rel, err := filepath.Rel(absRoot, abs); err == nil && !strings.HasPrefix(rel, "..") {
				shown = filepath.ToSlash(rel)
			}
		}
		out = append(out, docFile{path: a, shown: shown})
	}
	return out, nil
}

// moduleDir returns this module's directory: the blocks must be compiled
// there, where its go.mod resolves their imports.
func moduleDir() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	mod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil || !bytes.HasPrefix(mod, []byte("module "+thisModule+"\n")) {
		return "", errors.New("run it in tests/docs, where its go.mod is (go -C tests/docs run .)")
	}
	return dir, nil
}

// check compiles the blocks that are not fragments, all in one go build,
// and returns what failed.
func check(modDir string, blocks []block) ([]failure, error) {
	tmp, err := os.MkdirTemp("", "docs-blocks")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)

	var fails []failure
	overlay := map[string]string{}
	pkgs := map[string]*block{} // by the name of its package directory
	for i := range blocks {
		b := &blocks[i]
		if b.fragment {
			continue
		}
		if f, bad := unfit(b); bad {
			fails = append(fails, f)
			continue
		}
		name := fmt.Sprintf("b%04d", i)
		src, f, bad := asLibrary(b, name)
		if bad {
			fails = append(fails, f)
			continue
		}
		real := filepath.Join(tmp, name+".go")
		if err := os.WriteFile(real, []byte(src), 0o644); err != nil {
			return nil, err
		}
		// The block is a file of a package directory that exists only in
		// the overlay: nothing is written into this module.
		overlay[filepath.Join(modDir, "blocks", name, name+".go")] = real
		pkgs[name] = b
	}
	if len(pkgs) == 0 {
		return fails, nil
	}
	ov, err := json.Marshal(map[string]any{"Replace": overlay})
	if err != nil {
		return nil, err
	}
	ovPath := filepath.Join(tmp, "overlay.json")
	if err := os.WriteFile(ovPath, ov, 0o644); err != nil {
		return nil, err
	}

	// An import that no module here provides stops go build before it
	// compiles anything: go list finds those first, and they are left out
	// of the build.
	loadFails, err := listErrors(modDir, ovPath, pkgs)
	if err != nil {
		return nil, err
	}
	fails = append(fails, loadFails...)
	var build []string
	for _, name := range sortedKeys(pkgs) {
		if !slices.ContainsFunc(loadFails, func(f failure) bool { return f.b == pkgs[name] }) {
			build = append(build, "./blocks/"+name)
		}
	}
	if len(build) == 0 {
		return fails, nil
	}
	cmd := exec.Command("go", append([]string{"build", "-o", os.DevNull, "-overlay", ovPath}, build...)...)
	cmd.Dir = modDir
	output, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		return nil, err
	}
	buildFails, rest := parseBuild(string(output), pkgs)
	if err != nil && len(buildFails) == 0 {
		return nil, fmt.Errorf("go build: %v\n%s", err, rest)
	}
	return append(fails, buildFails...), nil
}

// unfit tells a block that cannot be compiled as it is: one with a word
// after go that is not fragment, or one that is not a whole file.
func unfit(b *block) (failure, bool) {
	for _, w := range b.words {
		if w != fragmentWord {
			return failure{b: b, line: b.line, msg: fmt.Sprintf("unknown word %q after go: the only one is %s", w, fragmentWord)}, true
		}
	}
	_, err := parser.ParseFile(token.NewFileSet(), "", b.src, parser.PackageClauseOnly)
	if err != nil {
		return failure{b: b, line: b.first(), msg: "not a whole file: begin it with its package clause and imports, or mark it ```go " + fragmentWord}, true
	}
	return failure{}, false
}

// asLibrary returns a block of package main as a package named name, so
// that go build compiles it and links nothing: linking each program took
// about a second and a half of make test's time (half of the check's CPU)
// and finds nothing the compiler does not, for programs of plain Go. What
// the compiler checks of a main package alone, its func main, is checked
// here, with the compiler's message. Any other block is returned as it
// is; so is one the parser refuses, for the compiler to say why.
func asLibrary(b *block, name string) (string, failure, bool) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", b.src, parser.SkipObjectResolution)
	if err != nil || f.Name.Name != "main" {
		return b.src, failure{}, false
	}
	if !slices.ContainsFunc(f.Decls, isFuncMain) {
		return "", failure{b: b, line: b.line + fset.Position(f.Name.Pos()).Line, msg: "function main is undeclared in the main package"}, true
	}
	at := fset.Position(f.Name.Pos()).Offset
	return b.src[:at] + name + b.src[at+len("main"):], failure{}, false
}

// isFuncMain says whether d declares the function main.
func isFuncMain(d ast.Decl) bool {
	fn, ok := d.(*ast.FuncDecl)
	return ok && fn.Recv == nil && fn.Name.Name == "main"
}

// goListPackage is what go list -json says of a block's package.
type goListPackage struct {
	ImportPath string
	Error      *struct{ Pos, Err string }
	DepsErrors []struct{ Pos, Err string }
}

// listErrors returns the blocks' load errors: a missing import, a package
// clause go list refuses.
func listErrors(modDir, ovPath string, pkgs map[string]*block) ([]failure, error) {
	args := []string{"list", "-e", "-json=ImportPath,Error,DepsErrors", "-overlay", ovPath}
	for _, name := range sortedKeys(pkgs) {
		args = append(args, "./blocks/"+name)
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = modDir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	output, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %v\n%s", err, stderr.String())
	}
	var fails []failure
	dec := json.NewDecoder(bytes.NewReader(output))
	for {
		var p goListPackage
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			return nil, err
		}
		b := pkgs[filepath.Base(p.ImportPath)]
		if b == nil {
			continue
		}
		errs := p.DepsErrors
		if p.Error != nil {
			errs = append(errs, *p.Error)
		}
		seen := map[string]bool{}
		for _, e := range errs {
			if f := placed(b, e.Pos, explain(e.Err)); !seen[f.String()] {
				seen[f.String()] = true
				fails = append(fails, f)
			}
		}
	}
	return fails, nil
}

// explain shortens a go command's message to its first line, with advice
// where the fix is in this module.
func explain(msg string) string {
	msg, _, _ = strings.Cut(msg, "\n")
	msg = strings.TrimSuffix(msg, "; to add it:")
	if strings.Contains(msg, "no required module provides package") {
		msg += " (for a doc to import it, add it to tests/docs/imports.go and run make tidy)"
	}
	return msg
}

// posRE finds a block's file in a position, as go build and go list print
// it: b0007.go:12:5.
var posRE = regexp.MustCompile(`\bb(\d{4})\.go:(\d+)(?::(\d+))?`)

// placed is the failure msg at pos, a position in b's file, placed in its
// Markdown file; at the block's first line when pos is not one.
func placed(b *block, pos, msg string) failure {
	m := posRE.FindStringSubmatch(pos)
	if m == nil {
		return failure{b: b, line: b.first(), msg: strings.TrimSpace(pos + " " + msg)}
	}
	line, _ := strconv.Atoi(m[2])
	col, _ := strconv.Atoi(m[3])
	if col > 0 {
		col += b.indent
	}
	return failure{b: b, line: b.line + line, col: col, msg: msg}
}

// buildLineRE is one message of go build: b0007.go:12:5: undefined: x.
var buildLineRE = regexp.MustCompile(`^\S*\bb(\d{4})\.go:\d+(?::\d+)?: (.*)$`)

// parseBuild places go build's messages in the blocks' Markdown files,
// and returns what it could not place.
func parseBuild(output string, pkgs map[string]*block) ([]failure, string) {
	var fails []failure
	var rest []string
	for _, line := range strings.Split(output, "\n") {
		switch m := buildLineRE.FindStringSubmatch(line); {
		case m != nil && pkgs["b"+m[1]] != nil:
			fails = append(fails, placed(pkgs["b"+m[1]], line, m[2]))
		case strings.HasPrefix(line, "\t") && len(fails) > 0:
			fails[len(fails)-1].msg += "; " + strings.TrimSpace(line)
		case strings.HasPrefix(line, "# "+thisModule+"/blocks/"), strings.TrimSpace(line) == "":
		default:
			rest = append(rest, line)
		}
	}
	return fails, strings.Join(rest, "\n")
}

func sortedKeys(m map[string]*block) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, filepath.ToSlash(f))
		}
	}
	return out
}

func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}
