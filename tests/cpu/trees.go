package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// A tree is a keepwatch checkout whose keepwatch is measured, and the
// binary of this program built against it.
type tree struct {
	dir   string
	label string
	exe   string
}

const modulePath = "github.com/keepwatch/file/tests/cpu"

// prepareTrees gives each tree named a binary: this program's own for the
// checkout it was built in; for another, a copy of this module whose
// keepwatch is replaced by that tree's, built in work. With no tree
// named, it is this checkout's alone.
func prepareTrees(dirs []string, self, work string) ([]tree, error) {
	src, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	own, err := ownTree(src)
	if err != nil {
		return nil, err
	}
	if len(dirs) == 0 {
		dirs = []string{own}
	}
	var trees []tree
	for i, d := range dirs {
		t, err := prepareTree(d, own, src, self, filepath.Join(work, fmt.Sprint(i)))
		if err != nil {
			return nil, err
		}
		trees = append(trees, t)
	}
	uniqueLabels(trees)
	return trees, nil
}

func prepareTree(dir, own, src, self, work string) (tree, error) {
	abs, err := filepath.Abs(dir)
	if err == nil {
		abs, err = filepath.EvalSymlinks(abs)
	}
	if err != nil {
		return tree{}, err
	}
	t := tree{dir: abs, label: treeLabel(abs), exe: self}
	if abs != own {
		fmt.Fprintf(os.Stderr, "building against %s\n", abs)
		t.exe, err = buildAgainst(abs, src, work)
	}
	return t, err
}

// ownTree is the checkout this module is in (../..), whose keepwatch the
// workspace (go.work) builds it with: src must be this module's
// directory, as it is under make and go run.
func ownTree(src string) (string, error) {
	mod, err := os.ReadFile(filepath.Join(src, "go.mod"))
	if err != nil || !bytes.HasPrefix(mod, []byte("module "+modulePath+"\n")) {
		return "", fmt.Errorf("run this from tests/cpu, its module's directory (make bench-cpu does)")
	}
	return filepath.EvalSymlinks(filepath.Join(src, "..", ".."))
}

// buildAgainst copies this module into work, points its keepwatch at
// tree, and builds it. go mod tidy tries the module cache alone first,
// and the proxy only if the tree needs what the cache does not have.
func buildAgainst(tree, src, work string) (string, error) {
	dst := filepath.Join(work, "src")
	if err := copyModule(src, dst); err != nil {
		return "", err
	}
	if err := goCommand(dst, nil, "mod", "edit", "-replace", "github.com/keepwatch/file="+tree); err != nil {
		return "", err
	}
	if err := goCommand(dst, []string{"GOPROXY=off"}, "mod", "tidy"); err != nil {
		fmt.Fprintln(os.Stderr, "go mod tidy from the module cache failed; again through the proxy")
		if err := goCommand(dst, nil, "mod", "tidy"); err != nil {
			return "", err
		}
	}
	exe := filepath.Join(work, "keepwatch-cpu")
	return exe, goCommand(dst, nil, "build", "-o", exe, ".")
}

// copyModule copies the module's files (it has no subdirectories).
func copyModule(src, dst string) error {
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() || !(strings.HasSuffix(name, ".go") || name == "go.mod" || name == "go.sum") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, name))
		if err == nil {
			err = os.WriteFile(filepath.Join(dst, name), b, 0o644)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// goCommand runs the go command ($GO, as make passes it, or go) in dir.
func goCommand(dir string, env []string, args ...string) error {
	goBin := os.Getenv("GO")
	if goBin == "" {
		goBin = "go"
	}
	cmd := exec.Command(goBin, args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "GOWORK=off"), env...) // a copy elsewhere: not of this workspace
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("go %s in %s: %w\n%s", strings.Join(args, " "), dir, err, out)
	}
	return nil
}

// treeLabel names a tree in the table: its directory's name and its
// commit, marked "+changes" when its tracked files differ from it.
func treeLabel(dir string) string {
	label := filepath.Base(dir)
	out, err := exec.Command("git", "-C", dir, "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return label
	}
	label += "@" + strings.TrimSpace(string(out))
	status, err := exec.Command("git", "-C", dir, "status", "--porcelain", "--untracked-files=no").Output()
	if err == nil && len(bytes.TrimSpace(status)) > 0 {
		label += "+changes"
	}
	return label
}

// uniqueLabels numbers the trees whose labels are the same.
func uniqueLabels(trees []tree) {
	seen := map[string]int{}
	for i := range trees {
		seen[trees[i].label]++
		if n := seen[trees[i].label]; n > 1 {
			trees[i].label += fmt.Sprintf("#%d", n)
		}
	}
}
