package chain

import (
	"math/bits"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
)

// The names, directories and symlink targets FuzzResolve builds trees of.
var (
	fuzzNames   = []string{"a", "b", "key", "..data", "..ts1", "..ts2", "c", "x"}
	fuzzDirs    = []string{"", "a", "b", "a/c"}
	fuzzTargets = []string{"..", "../a", "key", "..data/key", "b", "c/key", "../../x", ".", "a/..", "key/../b", "..ts1", "x/x/x", "/"}
	fuzzQueries = []string{"key", "a/key", "a/c/key", "b/..data/key", "x", "a/x/key", "b", "..data/key",
		"b/../key", "a/c/../../x", "..data/../key", "x/../a/key"}
)

// fuzzRoot makes the fuzz trees' directories in a new temporary one.
func fuzzRoot(t *testing.T) string {
	root := t.TempDir()
	for _, d := range fuzzDirs[1:] {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// What a fuzz program's operations may do: FuzzResolve only makes files,
// symlinks (relative and absolute) and directories; FuzzResume's changes
// also remove and rename.
const (
	fuzzMakes   = 4
	fuzzChanges = 6
)

// fuzzApply runs prog under root, three bytes an operation: the operation
// (modulo kinds) and its symlink target (the bits above), the directory,
// the name. Every path it touches goes into touched, if not nil.
func fuzzApply(root string, prog []byte, kinds int, touched map[string]bool) {
	note := func(p string) {
		if touched != nil {
			touched[p] = true
		}
	}
	for i := 0; i+2 < len(prog); i += 3 {
		op, a, b := int(prog[i]), int(prog[i+1]), int(prog[i+2])
		at := filepath.Join(root, fuzzDirs[a%len(fuzzDirs)], fuzzNames[b%len(fuzzNames)])
		target := fuzzTargets[(op>>bits.Len(uint(kinds-1)))%len(fuzzTargets)]
		note(at)
		switch op % kinds {
		case 0:
			_ = os.WriteFile(at, []byte(at), 0o644)
		case 1:
			_ = os.Symlink(target, at)
		case 2:
			_ = os.Symlink(filepath.Join(root, target), at)
		case 3:
			_ = os.Mkdir(at, 0o755)
		case 4:
			_ = os.RemoveAll(at)
		case 5:
			note(at + "~")
			_ = os.Rename(at, at+"~")
		}
	}
}

// FuzzResolve builds a small tree of directories, files and symlinks from
// the input, and checks Resolve against the kernel: it finds the file the
// kernel opens, fails where the kernel fails, and watches only directories
// that exist. `make fuzz` runs it; seeds are in testdata/fuzz.
func FuzzResolve(f *testing.F) {
	f.Add([]byte{0, 0, 2, 1, 0, 3, 1, 2, 2, 0})
	f.Add([]byte{3, 1, 0, 1, 0, 7, 0, 7, 2, 5})
	f.Fuzz(func(t *testing.T, program []byte) {
		root := fuzzRoot(t)
		fuzzApply(root, program, fuzzMakes, nil)
		// Not filepath.Join, which cleans "b/../key" to "key": the kernel
		// goes up from where the symlink b leads.
		q := root + "/" + fuzzQueries[len(program)%len(fuzzQueries)]

		c := Resolve(q, nil)
		want, kerr := os.Stat(q)
		switch {
		case kerr == nil && c.Err != nil:
			t.Fatalf("kernel opens %s, resolve fails: %v", q, c.Err)
		case kerr != nil && c.Err == nil:
			t.Fatalf("kernel fails on %s (%v), resolve finds %s", q, kerr, c.Real)
		case kerr == nil:
			got, err := os.Stat(c.Real)
			if err != nil || !os.SameFile(want, got) {
				t.Fatalf("%s: resolve finds %s, not the kernel's file", q, c.Real)
			}
			if real, err := filepath.EvalSymlinks(c.Real); err != nil || real != c.Real {
				t.Fatalf("%s: %s is not symlink-free (%s, %v)", q, c.Real, real, err)
			}
			// "/" is never looked up by name; it is where resolution starts.
			if c.Real != string(filepath.Separator) && !c.Names[c.Real] {
				t.Fatalf("%s: the file's own path %s is not among the names watched for", q, c.Real)
			}
		}
		for _, d := range c.Dirs {
			if info, err := os.Stat(d); err != nil || !info.IsDir() {
				t.Fatalf("%s: watches %s, which is not a directory (%v)", q, d, err)
			}
		}
	})
}

// A path's lookup starts at its root: "/", or on Windows its volume's.
func TestRootSplitsAtTheRoot(t *testing.T) {
	type split struct {
		root  string
		names []string
	}
	cases := map[string]split{
		"/":                       {"/", nil},
		"/etc/app/../config.yaml": {"/", []string{"etc", "app", "..", "config.yaml"}},
		"//etc/./app/":            {"/", []string{"etc", "app"}},
	}
	if runtime.GOOS == "windows" {
		cases = map[string]split{
			`C:\`:                        {`C:\`, nil},
			`C:\app\config.yaml`:         {`C:\`, []string{"app", "config.yaml"}},
			`C:/app/./conf\config.yaml`:  {`C:\`, []string{"app", "conf", "config.yaml"}},
			`\\host\share\app\conf.yaml`: {`\\host\share\`, []string{"app", "conf.yaml"}},
		}
	}
	for abs, want := range cases {
		root, names := root(abs)
		if root != want.root || !slices.Equal(names, want.names) {
			t.Errorf("root(%q) = %q, %q; want %q, %q", abs, root, names, want.root, want.names)
		}
	}
}

// FuzzResume builds a tree as FuzzResolve does, resolves a path, then
// changes the tree, and checks that Resume, told which names changed (as a
// watcher's events name them), finds what a fresh Resolve finds.
func FuzzResume(f *testing.F) {
	f.Add([]byte{0, 0, 2, 1, 0, 3, 1, 2, 2, 0}, []byte{4, 0, 2, 1, 0, 2})
	f.Add([]byte{3, 1, 0, 1, 0, 7, 0, 7, 2, 5}, []byte{5, 1, 0, 0, 0, 3})
	f.Fuzz(func(t *testing.T, program, changes []byte) {
		root := fuzzRoot(t)
		fuzzApply(root, program, fuzzChanges, nil)
		q := root + "/" + fuzzQueries[len(program)%len(fuzzQueries)]
		prev := Resolve(q, nil)
		taken := Resolve(q, nil) // the same, for ResumeReusing to consume
		touched := map[string]bool{}
		fuzzApply(root, changes, fuzzChanges, touched)

		changed := func(p string) bool { return touched[p] }
		want := Resolve(q, nil)
		for _, got := range []Chain{Resume(q, &prev, changed, nil), ResumeReusing(q, &taken, changed, nil)} {
			sameInfo := (got.RealInfo == nil) == (want.RealInfo == nil) && (got.RealInfo == nil || os.SameFile(got.RealInfo, want.RealInfo))
			if got.Real != want.Real || (got.Err == nil) != (want.Err == nil) || !got.Same(&want) || !slices.Equal(got.Hops, want.Hops) || !sameInfo {
				t.Fatalf("%s after %v: resumed %+v, resolved %+v", q, touched, got, want)
			}
		}
	})
}

// Resume with nothing changed looks nothing up; with everything changed,
// it resolves afresh.
func TestResumeLooksUpOnlyWhatChanged(t *testing.T) {
	root := t.TempDir()
	vol := filepath.Join(root, "vol")
	for _, d := range []string{"..1", "..2"} {
		if err := os.MkdirAll(filepath.Join(vol, d), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(vol, d, "key"), []byte(d), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Symlink("..1", filepath.Join(vol, "..data")))
	must(os.Symlink("..data/key", filepath.Join(vol, "key")))
	q := filepath.Join(vol, "key")
	prev := Resolve(q, nil)

	var looked []string
	note := func(p string) { looked = append(looked, p) }
	same := Resume(q, &prev, func(string) bool { return false }, note)
	if len(looked) != 0 || !same.Same(&prev) {
		t.Fatalf("nothing changed, yet looked up %v", looked)
	}

	// A kubelet swap: only ..data and what follows it are looked up again.
	must(os.Symlink("..2", filepath.Join(vol, "..data_tmp")))
	must(os.Rename(filepath.Join(vol, "..data_tmp"), filepath.Join(vol, "..data")))
	got := Resume(q, &prev, func(p string) bool { return p == filepath.Join(vol, "..data") }, note)
	want := []string{filepath.Join(vol, "..data"), filepath.Join(vol, "..2"), filepath.Join(vol, "..2", "key")}
	if !slices.Equal(looked, want) {
		t.Fatalf("looked up %v, want %v", looked, want)
	}
	if got.Real != filepath.Join(vol, "..2", "key") {
		t.Fatalf("resumed to %s", got.Real)
	}

	// The file renamed over: only it is looked up, and the resolution
	// finds the new one.
	looked = nil
	tmp := filepath.Join(vol, "..2", "key.tmp")
	must(os.WriteFile(tmp, []byte("new"), 0o644))
	must(os.Rename(tmp, got.Real))
	again := Resume(q, &got, func(p string) bool { return p == got.Real }, note)
	now, err := os.Lstat(got.Real)
	must(err)
	if !slices.Equal(looked, []string{got.Real}) || !again.Same(&got) || !os.SameFile(again.RealInfo, now) {
		t.Fatalf("file renamed over: looked up %v, found %v", looked, again.RealInfo)
	}
}
