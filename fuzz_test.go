package file

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Fuzz targets for what decides from untrusted input: symlink chains and
// paths, event sequences, file sizes. `make fuzz` runs each for a while;
// seeds are in testdata/fuzz.

var (
	fuzzNames   = []string{"a", "b", "key", "..data", "..ts1", "..ts2", "c", "x"}
	fuzzDirs    = []string{"", "a", "b", "a/c"}
	fuzzTargets = []string{"..", "../a", "key", "..data/key", "b", "c/key", "../../x", ".", "a/..", "key/../b", "..ts1", "x/x/x", "/"}
	fuzzQueries = []string{"key", "a/key", "a/c/key", "b/..data/key", "x", "a/x/key", "b", "..data/key"}
)

// FuzzResolve builds a small tree of directories, files and symlinks from
// the input, and checks resolve against the kernel: it finds the file the
// kernel opens, fails where the kernel fails, and watches only directories
// that exist.
func FuzzResolve(f *testing.F) {
	f.Add([]byte{0, 0, 2, 1, 0, 3, 1, 2, 2, 0})
	f.Add([]byte{3, 1, 0, 1, 0, 7, 0, 7, 2, 5})
	f.Fuzz(func(t *testing.T, program []byte) {
		root := t.TempDir()
		for _, d := range fuzzDirs[1:] {
			if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		for i := 0; i+2 < len(program); i += 3 {
			op, a, b := program[i], int(program[i+1]), int(program[i+2])
			at := filepath.Join(root, fuzzDirs[a%len(fuzzDirs)], fuzzNames[b%len(fuzzNames)])
			target := fuzzTargets[int(op>>2)%len(fuzzTargets)]
			switch op % 4 {
			case 0:
				_ = os.WriteFile(at, []byte(at), 0o644)
			case 1:
				_ = os.Symlink(target, at)
			case 2:
				_ = os.Symlink(filepath.Join(root, target), at)
			case 3:
				_ = os.Mkdir(at, 0o755)
			}
		}
		q := filepath.Join(root, fuzzQueries[len(program)%len(fuzzQueries)])

		c := resolve(q, nil)
		want, kerr := os.Stat(q)
		switch {
		case kerr == nil && c.err != nil:
			t.Fatalf("kernel opens %s, resolve fails: %v", q, c.err)
		case kerr != nil && c.err == nil:
			t.Fatalf("kernel fails on %s (%v), resolve finds %s", q, kerr, c.real)
		case kerr == nil:
			got, err := os.Stat(c.real)
			if err != nil || !os.SameFile(want, got) {
				t.Fatalf("%s: resolve finds %s, not the kernel's file", q, c.real)
			}
			if real, err := filepath.EvalSymlinks(c.real); err != nil || real != c.real {
				t.Fatalf("%s: %s is not symlink-free (%s, %v)", q, c.real, real, err)
			}
			// "/" is never looked up by name; it is where resolution starts.
			if c.real != string(filepath.Separator) && !c.names[c.real] {
				t.Fatalf("%s: the file's own path %s is not among the names watched for", q, c.real)
			}
		}
		for _, d := range c.dirs {
			if info, err := os.Stat(d); err != nil || !info.IsDir() {
				t.Fatalf("%s: watches %s, which is not a directory (%v)", q, d, err)
			}
		}
	})
}

// FuzzSessionEvents drives one watch with an arbitrary sequence of disk
// changes, events (true, irrelevant or lying), faults and pauses, in virtual
// time. Whatever the sequence, once it has settled the callback has seen the
// file on disk, and never the same content twice in a row.
func FuzzSessionEvents(f *testing.F) {
	f.Add([]byte{0, 1, 5, 2, 9, 3, 1, 4, 0, 6})
	f.Add([]byte{1, 0, 1, 0, 7, 200, 2, 3, 8, 1})
	f.Fuzz(func(t *testing.T, script []byte) {
		if len(script) > 200 {
			script = script[:200]
		}
		synctest.Test(t, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "config.yaml")
			write(t, path, "v0\n")
			fs := &fakes{}
			f := Provider(path, withNotifier(fs.new), WithLogger(failLogger(t)),
				WithRecheckInterval(time.Second), WithQuietWindow(50*time.Millisecond),
				WithBackoff(10*time.Millisecond, 100*time.Millisecond))
			base, _ := f.ReadBytes()
			r := newRecorder(f)
			if err := f.Watch(r.cb); err != nil {
				t.Fatal(err)
			}
			defer f.Unwatch()
			synctest.Wait()

			for i := 0; i+1 < len(script); i += 2 {
				op, arg := script[i], script[i+1]
				content := fmt.Sprintf("v%d\n", arg%7) // repeats on purpose
				n := fs.last()
				send := func(name string, o fsnotify.Op) {
					if n != nil {
						n.send(name, o)
					}
				}
				switch op % 10 {
				case 0: // in-place write, reported
					_ = os.WriteFile(path, []byte(content), 0o644)
					send(path, fsnotify.Write)
				case 1: // rename-over, reported
					_ = replaceFile(path, content)
					send(path, fsnotify.Create)
				case 2: // delete, reported
					_ = os.Remove(path)
					send(path, fsnotify.Remove)
				case 3: // a change nobody reports
					_ = os.WriteFile(path, []byte(content), 0o644)
				case 4: // an event for another file
					send(filepath.Join(dir, "other"), fsnotify.Create)
				case 5: // an event that lies: nothing changed
					send(path, fsnotify.Op(1+arg%31))
				case 6: // the notifier breaks
					if n != nil {
						n.fail(fsnotify.ErrEventOverflow)
					}
				case 7: // events were dropped
					if n != nil {
						select {
						case n.events <- lostEvent:
						case <-n.closed:
						}
					}
				case 8: // an empty file, reported
					_ = os.WriteFile(path, nil, 0o644)
					send(path, fsnotify.Write)
				case 9: // time passes
					time.Sleep(time.Duration(arg) * time.Millisecond)
				}
				synctest.Wait()
			}
			time.Sleep(10 * time.Second) // settle: re-checks run, backoffs end
			synctest.Wait()

			if err := converged(path, string(base), r); err != nil {
				t.Fatalf("%v\ncalls: %s", err, r)
			}
			if i, data, ok := r.repeat(string(base)); ok {
				t.Fatalf("call %d repeats %q\ncalls: %s", i, data, r)
			}
		})
	})
}

// FuzzReadFile checks the size limit: the whole file up to the limit, a
// clear error past it, never more than limit+1 bytes read.
func FuzzReadFile(f *testing.F) {
	f.Add(uint16(0), uint16(0))
	f.Add(uint16(100), uint16(99))
	f.Add(uint16(4096), uint16(4096))
	f.Fuzz(func(t *testing.T, size, limit uint16) {
		path := filepath.Join(t.TempDir(), "f")
		data := strings.Repeat("x", int(size))
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		c, err := readFile(path, "f", int64(limit))
		switch {
		case int(size) <= int(limit) && (err != nil || string(c.data) != data):
			t.Fatalf("size %d, limit %d: %v", size, limit, err)
		case int(size) > int(limit) && !errors.Is(err, ErrFileTooLarge):
			t.Fatalf("size %d, limit %d: want ErrFileTooLarge, got %v", size, limit, err)
		}
	})
}
