// Command release checks that the repository's published modules can be
// released as they stand, and resolve for a user without any replace:
//
//	make release-check      (from the repository's root; about a minute)
//
// The published modules, and the versions they are to be tagged with next,
// are go.work's versioned replaces (github.com/keepwatch/file v0.1.0 =>
// ./). The check:
//
//  1. checks each published module: a LICENSE, no replace in its go.mod,
//     its requirements of the others at exactly their next versions, and a
//     section for the root's version in CHANGELOG.md;
//  2. builds a module proxy in a directory (GOPROXY=file://...) from the
//     working tree at those versions: each module's zip (by
//     golang.org/x/mod/zip, of the files git tracks or does not ignore),
//     go.mod and .info, as the Go module proxy serves them, refusing a
//     module that holds a built binary or a file over 1 MiB;
//  3. makes a fresh consumer module, with no replace and no go.work, that
//     goes get the root, live and keepwatchprom at those versions, with
//     that proxy first and the ordinary one for everything else; it builds
//     and vets the README's first program and docs/operating.md's metrics
//     program there, and go installs the keepwatch command, as the README
//     says; the consumer's go.mod is printed;
//  4. reports the root module's API with apidiff: against the API of the
//     previous release of the root module (its latest tag vX.Y.Z below the
//     next version), or, before the first, against nothing: every name it
//     exports. An incompatible change fails the check unless the version's
//     minor (before v1) or major is bumped. The export data is written to
//     bin/release/, for a comparison by hand.
//
// Nothing but the Go module proxy is reached: the consumer's module cache
// is a temporary one, filled from the local proxy, this machine's module
// cache, and then the proxy of go env GOPROXY. Checksums of the local
// versions are not looked up (GONOSUMDB), every other one is.
package main

import (
	"archive/zip"
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"
	modzip "golang.org/x/mod/zip"
)

func main() {
	keep := flag.Bool("keep", false, "keep the check's temporary directory, and say where it is")
	flag.Parse()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err == nil {
		err = run(root, *keep)
	}
	if err != nil {
		fmt.Println("FAIL:", err)
		os.Exit(1)
	}
	fmt.Println("PASS: the release check")
}

// published is a module to be released: its path, its next version, its
// directory.
type published struct {
	path, version, dir string
	rel                string // dir, relative to the repository: "." for the root's
}

func run(root string, keep bool) error {
	began := time.Now()
	mods, err := readWork(root)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "keepwatch-release")
	if err != nil {
		return err
	}
	if keep {
		fmt.Println("the check's directory:", tmp)
	} else {
		defer removeAll(tmp)
	}

	section("the published modules, at their next versions (go.work)")
	for _, m := range mods {
		fmt.Printf("%-40s %s  tag %s  (%s)\n", m.path, m.version, tag(m), m.rel)
	}
	if err := checkModules(root, mods); err != nil {
		return err
	}

	section("a module proxy of those versions, from the working tree")
	proxy := filepath.Join(tmp, "proxy")
	for _, m := range mods {
		if err := addToProxy(root, proxy, m); err != nil {
			return fmt.Errorf("%s@%s: %w", m.path, m.version, err)
		}
	}

	section("a consumer of those versions, with no replace")
	if err := consume(root, tmp, proxy, mods); err != nil {
		return err
	}

	section("the API of " + mods[0].path + " " + mods[0].version)
	if err := reportAPI(root, tmp, mods[0]); err != nil {
		return err
	}
	fmt.Printf("\n(%.0fs)\n", time.Since(began).Seconds())
	return nil
}

func section(s string) { fmt.Printf("\n== %s\n", s) }

func tag(m published) string {
	if m.rel == "." {
		return m.version
	}
	return m.rel + "/" + m.version
}

// readWork returns the published modules: go.work's versioned replaces by
// a directory, the root's first.
func readWork(root string) ([]published, error) {
	data, err := os.ReadFile(filepath.Join(root, "go.work"))
	if err != nil {
		return nil, err
	}
	wf, err := modfile.ParseWork("go.work", data, nil)
	if err != nil {
		return nil, err
	}
	var mods []published
	for _, r := range wf.Replace {
		if r.Old.Version == "" || r.New.Version != "" || !modfile.IsDirectoryPath(r.New.Path) {
			return nil, fmt.Errorf("go.work: replace %s %s => %s: a published module is replaced at its next version by its directory", r.Old.Path, r.Old.Version, r.New.Path)
		}
		rel := filepath.Clean(r.New.Path)
		mods = append(mods, published{path: r.Old.Path, version: r.Old.Version, dir: filepath.Join(root, rel), rel: rel})
	}
	slices.SortFunc(mods, func(a, b published) int { return strings.Compare(a.path, b.path) })
	if len(mods) == 0 || mods[0].rel != "." {
		return nil, errors.New("go.work: no replace of the root module by ./")
	}
	return mods, nil
}

// checkModules checks what a release of each module needs: a LICENSE, a
// go.mod of its own path with no replace, the others required at their
// next versions; and a CHANGELOG section for the root's version.
func checkModules(root string, mods []published) error {
	var problems []string
	next := map[string]string{}
	for _, m := range mods {
		next[m.path] = m.version
	}
	for _, m := range mods {
		if !semver.IsValid(m.version) || semver.Canonical(m.version) != m.version {
			problems = append(problems, fmt.Sprintf("%s: %q is not a canonical semantic version", m.path, m.version))
		}
		if _, err := os.Stat(filepath.Join(m.dir, "LICENSE")); err != nil {
			problems = append(problems, fmt.Sprintf("%s: no LICENSE in %s", m.path, m.rel))
		}
		data, err := os.ReadFile(filepath.Join(m.dir, "go.mod"))
		if err != nil {
			return err
		}
		mf, err := modfile.ParseLax("go.mod", data, nil)
		if err != nil {
			return err
		}
		if mf.Module.Mod.Path != m.path {
			problems = append(problems, fmt.Sprintf("%s/go.mod: module %s, not %s", m.rel, mf.Module.Mod.Path, m.path))
		}
		for _, r := range mf.Replace {
			problems = append(problems, fmt.Sprintf("%s/go.mod: replace %s: a published module's replace is ignored by its users", m.rel, r.Old.Path))
		}
		var requires []string
		for _, r := range mf.Require {
			v, ours := next[r.Mod.Path]
			if !ours {
				continue
			}
			requires = append(requires, r.Mod.Path+" "+r.Mod.Version)
			if r.Mod.Version != v {
				problems = append(problems, fmt.Sprintf("%s/go.mod: requires %s %s; its next version is %s", m.rel, r.Mod.Path, r.Mod.Version, v))
			}
		}
		if len(requires) == 0 {
			requires = []string{"(none of the others)"}
		}
		fmt.Printf("%s requires %s\n", m.path, strings.Join(requires, ", "))
	}
	changelog, err := os.ReadFile(filepath.Join(root, "CHANGELOG.md"))
	if err != nil {
		return err
	}
	if !bytes.Contains(changelog, []byte("## ["+strings.TrimPrefix(mods[0].version, "v")+"]")) {
		problems = append(problems, fmt.Sprintf("CHANGELOG.md: no section ## [%s]", strings.TrimPrefix(mods[0].version, "v")))
	}
	if len(problems) > 0 {
		return errors.New("the modules are not ready:\n  " + strings.Join(problems, "\n  "))
	}
	fmt.Println("each has a LICENSE and no replace; each requires the others at their next versions; CHANGELOG.md has", mods[0].version)
	return nil
}

// addToProxy writes m's version into the proxy directory, as the Go
// module proxy protocol lays it out: @v/list, .info, .mod and .zip.
func addToProxy(root, proxy string, m published) error {
	escaped, err := module.EscapePath(m.path)
	if err != nil {
		return err
	}
	dir := filepath.Join(proxy, escaped, "@v")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	files, err := moduleFiles(root, m)
	if err != nil {
		return err
	}
	if err := checkContents(files); err != nil {
		return err
	}
	var zipped bytes.Buffer
	if err := modzip.Create(&zipped, module.Version{Path: m.path, Version: m.version}, files); err != nil {
		return err
	}
	gomod, err := os.ReadFile(filepath.Join(m.dir, "go.mod"))
	if err != nil {
		return err
	}
	when, err := output(root, nil, "git", "log", "-1", "--format=%cI")
	if err != nil {
		return err
	}
	info, _ := json.Marshal(map[string]string{"Version": m.version, "Time": strings.TrimSpace(when)})
	for name, data := range map[string][]byte{
		"list":              []byte(m.version + "\n"),
		m.version + ".info": info,
		m.version + ".mod":  gomod,
		m.version + ".zip":  zipped.Bytes(),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
	}
	names, err := zipNames(zipped.Bytes())
	if err != nil {
		return err
	}
	fmt.Printf("%s@%s: %d files, %d bytes zipped (LICENSE %v)\n", m.path, m.version, len(names), zipped.Len(),
		slices.Contains(names, m.path+"@"+m.version+"/LICENSE"))
	return nil
}

// moduleFiles lists the files of m's directory that git tracks or does
// not ignore, as they are in the working tree; modzip.Create leaves out
// those of nested modules.
func moduleFiles(root string, m published) ([]modzip.File, error) {
	out, err := output(root, nil, "git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", m.rel)
	if err != nil {
		return nil, err
	}
	var files []modzip.File
	seen := map[string]bool{}
	for _, p := range strings.Split(out, "\x00") {
		if p == "" || seen[p] {
			continue
		}
		seen[p] = true
		abs := filepath.Join(root, p)
		if _, err := os.Lstat(abs); errors.Is(err, fs.ErrNotExist) {
			continue // deleted, not yet committed
		}
		rel, err := filepath.Rel(m.dir, abs)
		if err != nil {
			return nil, err
		}
		files = append(files, treeFile{path: filepath.ToSlash(rel), abs: abs})
	}
	return files, nil
}

// maxFileSize is the largest file a published module may hold. The
// largest that belongs in one is a document of about 100 KiB
// (docs/benchmarks.md); anything near a megabyte is a build's output or a
// measurement's, which every user's go get would then download.
const maxFileSize = 1 << 20

// binaryMagic are the first bytes of what a build leaves behind: an
// executable (ELF, Mach-O, PE) or an archive. A go build of ./cmd/keepwatch
// in the root writes ./keepwatch, and a git add -A takes it.
var binaryMagic = [][]byte{
	[]byte("\x7fELF"),
	{0xfe, 0xed, 0xfa, 0xce}, {0xfe, 0xed, 0xfa, 0xcf}, {0xce, 0xfa, 0xed, 0xfe}, {0xcf, 0xfa, 0xed, 0xfe},
	[]byte("MZ"),
	[]byte("!<arch>\n"),
}

// checkContents refuses a module whose files include a built binary or a
// file over maxFileSize.
func checkContents(files []modzip.File) error {
	var bad []string
	for _, f := range files {
		info, err := f.Lstat()
		if err != nil {
			return err
		}
		if !info.Mode().IsRegular() {
			continue
		}
		if info.Size() > maxFileSize {
			bad = append(bad, fmt.Sprintf("%s: %d bytes, over %d", f.Path(), info.Size(), maxFileSize))
			continue
		}
		if isBinary(f) {
			bad = append(bad, f.Path()+": a built binary")
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("files no user should download (git rm --cached them, and ignore them in .gitignore):\n  %s", strings.Join(bad, "\n  "))
	}
	return nil
}

// isBinary says whether f begins as an executable or an archive does.
func isBinary(f modzip.File) bool {
	r, err := f.Open()
	if err != nil {
		return false
	}
	defer r.Close()
	head := make([]byte, 8)
	n, _ := io.ReadFull(r, head)
	for _, magic := range binaryMagic {
		if bytes.HasPrefix(head[:n], magic) {
			return true
		}
	}
	return false
}

type treeFile struct{ path, abs string }

func (f treeFile) Path() string                 { return f.path }
func (f treeFile) Lstat() (fs.FileInfo, error)  { return os.Lstat(f.abs) }
func (f treeFile) Open() (io.ReadCloser, error) { return os.Open(f.abs) }

func zipNames(data []byte) ([]string, error) {
	r, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, err
	}
	var names []string
	for _, f := range r.File {
		names = append(names, f.Name)
	}
	return names, nil
}

// consume makes a consumer module of the published versions, with no
// replace, and builds the docs' programs in it.
func consume(root, tmp, proxy string, mods []published) error {
	defaultProxy, err := output(root, nil, "go", "env", "GOPROXY")
	if err != nil {
		return err
	}
	cache, err := output(root, nil, "go", "env", "GOMODCACHE")
	if err != nil {
		return err
	}
	env := []string{
		"GOWORK=off",
		"GOFLAGS=-mod=mod -modcacherw -buildvcs=false",
		"GOTOOLCHAIN=local",
		"GOPROXY=" + strings.Join([]string{
			"file://" + filepath.ToSlash(proxy),
			"file://" + filepath.ToSlash(filepath.Join(strings.TrimSpace(cache), "cache", "download")),
			strings.TrimSpace(defaultProxy),
		}, ","),
		"GONOSUMDB=github.com/keepwatch/file",
		"GOPRIVATE=", "GONOPROXY=",
		"GOMODCACHE=" + filepath.Join(tmp, "modcache"),
		"GOBIN=" + filepath.Join(tmp, "bin"),
	}
	app := filepath.Join(tmp, "consumer")
	programs := []struct{ dir, doc, after string }{
		{"readme", "README.md", ""},
		{"metrics", filepath.Join("docs", "operating.md"), "## Metrics: `keepwatchprom`"},
	}
	for _, p := range programs {
		src, err := goBlock(filepath.Join(root, p.doc), p.after)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Join(app, p.dir), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(app, p.dir, "main.go"), []byte(src), 0o644); err != nil {
			return err
		}
		where := p.doc + "'s first program"
		if p.after != "" {
			where = p.doc + "'s program under " + p.after
		}
		fmt.Printf("%s/main.go: %s (%d lines)\n", p.dir, where, strings.Count(src, "\n"))
	}
	get := []string{"get"}
	for _, m := range mods {
		get = append(get, m.path+"@"+m.version)
	}
	steps := [][]string{
		{"go", "mod", "init", "example.com/consumer"},
		{"go", "mod", "edit", "-go=1.25.0"}, // the README's Go 1.25 or later
		append([]string{"go"}, get...),
		{"go", "mod", "tidy"},
		{"go", "build", "-o", filepath.Join(tmp, "bin") + "/", "./..."},
		{"go", "vet", "./..."},
	}
	for _, s := range steps {
		if err := show(app, env, s...); err != nil {
			return err
		}
	}
	gomod, err := os.ReadFile(filepath.Join(app, "go.mod"))
	if err != nil {
		return err
	}
	fmt.Printf("\nthe consumer's go.mod:\n%s\n", indent(string(gomod)))
	if regexp.MustCompile(`(?m)^\s*replace\b`).Match(gomod) {
		return errors.New("the consumer's go.mod has a replace")
	}
	for _, m := range mods {
		if !strings.Contains(string(gomod), m.path+" "+m.version) {
			return fmt.Errorf("the consumer's go.mod does not require %s %s", m.path, m.version)
		}
	}
	built, err := os.ReadDir(filepath.Join(tmp, "bin"))
	if err != nil {
		return err
	}
	for _, b := range built {
		fi, _ := b.Info()
		fmt.Printf("built %s (%d bytes)\n", b.Name(), fi.Size())
	}
	// The README's go install, at the version, from an empty directory.
	empty := filepath.Join(tmp, "elsewhere")
	if err := os.Mkdir(empty, 0o755); err != nil {
		return err
	}
	if err := show(empty, env, "go", "install", mods[0].path+"/cmd/keepwatch@"+mods[0].version); err != nil {
		return err
	}
	return show(empty, env, filepath.Join(tmp, "bin", "keepwatch"), "help")
}

// goBlock returns the first Go block of the Markdown file that is a whole
// file (not a fragment) after the line after, or from the start.
func goBlock(path, after string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	searching, in := after == "", false
	var b strings.Builder
	for sc.Scan() {
		line := sc.Text()
		switch {
		case !searching:
			searching = line == after
		case !in:
			in = line == "```go"
		case line == "```":
			return b.String(), nil
		default:
			b.WriteString(line + "\n")
		}
	}
	return "", fmt.Errorf("%s: no Go block after %q", path, after)
}

// reportAPI writes the root module's API as apidiff's export data, and
// compares it with the previous release's, or with nothing.
func reportAPI(root, tmp string, m published) error {
	apidiff := filepath.Join(tmp, "apidiff")
	if err := show(filepath.Join(root, "tests", "release"), nil, "go", "build", "-o", apidiff, "golang.org/x/exp/cmd/apidiff"); err != nil {
		return err
	}
	off := []string{"GOWORK=off"}
	outDir := filepath.Join(root, "bin", "release")
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return err
	}
	next := filepath.Join(outDir, "file-"+m.version+".api")
	if err := quiet(root, off, apidiff, "-m", "-w", next, m.path); err != nil {
		return err
	}

	prev, err := previousTag(root, m.version)
	if err != nil {
		return err
	}
	base := filepath.Join(tmp, "base")
	if err := os.Mkdir(base, 0o755); err != nil {
		return err
	}
	var baseAPI string
	if prev != "" {
		fmt.Printf("against %s (git tag %s)\n", prev, prev)
		archive := exec.Command("sh", "-c", fmt.Sprintf("git -C %q archive %q | tar -x -C %q", root, prev, base))
		if out, err := archive.CombinedOutput(); err != nil {
			return fmt.Errorf("git archive %s: %v: %s", prev, err, out)
		}
		baseAPI = filepath.Join(outDir, "file-"+prev+".api")
	} else {
		// No release yet: a module of the same packages, each empty, so
		// that apidiff lists every name each package exports.
		fmt.Printf("no release of %s before %s (no tag v*): its whole API, against an empty module of the same packages\n", m.path, m.version)
		out, err := output(root, off, "go", "list", "-f", "{{.ImportPath}} {{.Name}}", "./...")
		if err != nil {
			return err
		}
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			importPath, name, _ := strings.Cut(line, " ")
			rel := strings.TrimPrefix(strings.TrimPrefix(importPath, m.path), "/")
			if err := os.MkdirAll(filepath.Join(base, rel), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(base, rel, "empty.go"), []byte("package "+name+"\n"), 0o644); err != nil {
				return err
			}
		}
		if err := os.WriteFile(filepath.Join(base, "go.mod"), []byte("module "+m.path+"\n\ngo 1.25.0\n"), 0o644); err != nil {
			return err
		}
		baseAPI = filepath.Join(tmp, "empty.api")
	}
	if err := quiet(base, off, apidiff, "-m", "-w", baseAPI, m.path); err != nil {
		return err
	}
	report, err := output(root, nil, apidiff, "-m", baseAPI, next)
	if err != nil {
		return err
	}
	fmt.Printf("apidiff -m %s %s\n%s", rel(root, baseAPI), rel(root, next), indent(report))
	fmt.Printf("the API's export data: %s (apidiff -m OLD NEW compares two)\n", rel(root, next))
	incompatible, err := output(root, nil, apidiff, "-m", "-incompatible", baseAPI, next)
	if err != nil {
		return err
	}
	if prev != "" && strings.TrimSpace(incompatible) != "" && !bumped(prev, m.version) {
		return fmt.Errorf("incompatible changes since %s, and %s does not bump its %s", prev, m.version,
			map[bool]string{true: "minor (before v1)", false: "major"}[semver.Major(prev) == "v0"])
	}
	return nil
}

// previousTag returns the latest tag vX.Y.Z of the root module below
// version; "" if none.
func previousTag(root, version string) (string, error) {
	out, err := output(root, nil, "git", "tag", "--list", "v*")
	if err != nil {
		return "", err
	}
	prev := ""
	for _, t := range strings.Fields(out) {
		if semver.IsValid(t) && semver.Compare(t, version) < 0 && (prev == "" || semver.Compare(t, prev) > 0) {
			prev = t
		}
	}
	return prev, nil
}

// bumped reports whether next may break prev's API: a new major, or
// before v1 a new minor.
func bumped(prev, next string) bool {
	if semver.Major(prev) == "v0" && semver.Major(next) == "v0" {
		return semver.MajorMinor(prev) != semver.MajorMinor(next)
	}
	return semver.Major(prev) != semver.Major(next)
}

// show runs a command in dir, printing it and its output.
func show(dir string, env []string, args ...string) error {
	fmt.Printf("$ %s\n", strings.Join(args, " "))
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir, cmd.Env = dir, append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	// What was downloaded, from where, is the module cache's business.
	out = regexp.MustCompile(`(?m)^go: downloading .*\n`).ReplaceAll(out, nil)
	if len(out) > 0 {
		fmt.Print(indent(string(out)))
	}
	if err != nil {
		return fmt.Errorf("%s: %w", strings.Join(args, " "), err)
	}
	return nil
}

// quiet runs a command, and prints its output only if it fails.
func quiet(dir string, env []string, args ...string) error {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir, cmd.Env = dir, append(os.Environ(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}

func output(dir string, env []string, args ...string) (string, error) {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir, cmd.Env = dir, append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s: %w: %s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out), nil
}

func rel(root, path string) string {
	if r, err := filepath.Rel(root, path); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return path
}

func indent(s string) string {
	if s == "" {
		return ""
	}
	return "    " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n    ") + "\n"
}

// removeAll removes the check's directory, the module cache's read-only
// files too.
func removeAll(dir string) {
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(p, 0o755)
		}
		return nil
	})
	_ = os.RemoveAll(dir)
}
