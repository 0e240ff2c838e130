package file

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/keepwatch/file/internal/decide"

	"github.com/fsnotify/fsnotify"
	"github.com/keepwatch/file/internal/events"
)

// Fuzz targets for what decides from untrusted input: event sequences
// (file sizes' is in internal/osfile, the resolver's in internal/chain).
// `make fuzz` runs each for a while; seeds are in testdata/fuzz.

// FuzzSessionEvents drives one watch with an arbitrary sequence of disk
// changes, events (true, irrelevant or lying), faults and pauses, in virtual
// time. Whatever the sequence, every content the callback got is one a
// writer finished (or what a writer that paused longer than the window had
// written then), once it has settled the callback has seen the file on
// disk, and it never got the same content twice in a row.
func FuzzSessionEvents(f *testing.F) {
	f.Add([]byte{0, 1, 5, 2, 9, 3, 1, 4, 0, 6})
	f.Add([]byte{1, 0, 1, 0, 7, 200, 2, 3, 8, 1})
	f.Add([]byte{0x80, 1, 250, 3, 251, 40, 2, 0, 9, 100, 0, 2, 251, 120, 1, 4})
	f.Add([]byte{0x81, 2, 240, 5, 250, 6, 3, 1, 251, 200, 2, 1, 9, 60})
	f.Fuzz(func(t *testing.T, script []byte) {
		if len(script) > 200 {
			script = script[:200]
		}
		synctest.Test(t, func(t *testing.T) {
			dir := t.TempDir()
			// Named for the script, so that traces (trace_test.go) tell
			// the seeds apart.
			path := filepath.Join(dir, fmt.Sprintf("fuzz-%x", sha256.Sum256(script))[:21]+".yaml")
			write(t, path, "v0\n")
			// A first byte with its high bit set plays the Linux backend:
			// closes reported, creations told from renames, and the events
			// the kernel sends with each change.
			closes := len(script) > 0 && script[0]&0x80 != 0
			fs := &fakes{caps: decide.Caps{Closes: closes}}
			f := Provider(path, withNotifier(fs.new), withoutWriterProbe(), WithLogger(failLogger(t)), WithErrorCallbacks(),
				WithRecheckInterval(time.Second), WithQuietWindow(50*time.Millisecond),
				withBackoff(10*time.Millisecond, 100*time.Millisecond))
			base, _ := f.ReadBytes()
			finished := map[string]bool{string(base): true, "": true} // case 8 writes an empty file on purpose
			pauseLimit := 50 * time.Millisecond                       // the quiet window
			if closes {
				pauseLimit = decide.HeldOpenWindow
			}
			r := newRecorder(f)
			if err := f.Watch(r.cb); err != nil {
				t.Fatal(err)
			}
			defer shutdown(t, f)
			synctest.Wait()

			for i := 0; i+1 < len(script); i += 2 {
				code, arg := script[i], script[i+1]
				content := fmt.Sprintf("v%d\n", arg%7) // repeats on purpose
				finished[content] = true
				n := fs.last()
				notify := func(name string, o decide.Op) { send(n, name, o) }
				kind := int(code % 10)
				if code >= 240 {
					kind = 10 + int(code%2)
				}
				// A write stamps the file with the time it is made, here
				// the bubble's, so that what the watch makes of a file's
				// age is what it would make of it in real time; a
				// nanosecond per step keeps two writes apart, as the
				// kernel's clock does.
				stamp := func() {
					now := time.Now().Add(time.Duration(i) * time.Nanosecond)
					_ = os.Chtimes(path, now, now)
				}
				closed := func() {
					if closes {
						notify(path, decide.OpClose)
					}
				}
				switch kind {
				case 0: // in-place write, reported
					_ = os.WriteFile(path, []byte(content), 0o644)
					stamp()
					notify(path, decide.OpWrite)
					closed()
				case 1: // rename-over, reported
					_ = replaceFile(path, content)
					stamp()
					notify(path, decide.OpCreate)
					if closes {
						notify(path, decide.OpAttrib) // the old file's link count
						notify(path, decide.OpRemove) // and its removal, on its own watch
					}
				case 2: // delete, reported
					_ = os.Remove(path)
					if closes {
						notify(path, decide.OpAttrib)
						notify(path, decide.OpRemove) // on its own watch
					}
					notify(path, decide.OpRemove)
				case 3: // a change nobody reports
					_ = os.WriteFile(path, []byte(content), 0o644)
					stamp()
				case 4: // an event for another file
					notify(filepath.Join(dir, "other"), decide.OpCreate)
				case 5: // an event that lies: nothing changed
					notify(path, events.FsnotifyOp(fsnotify.Op(1+arg%31)))
				case 6: // the notifier breaks
					if n != nil {
						n.fail(fsnotify.ErrEventOverflow)
					}
				case 7: // events were dropped
					if n != nil {
						select {
						case n.events <- decide.Event{Op: decide.OpRescan}:
						case <-n.closed:
						}
					}
				case 8: // an empty file, reported
					_ = os.WriteFile(path, nil, 0o644)
					stamp()
					notify(path, decide.OpWrite)
					closed()
				case 9: // time passes
					time.Sleep(time.Duration(arg) * time.Millisecond)
				case 10: // removed, and created again by a writer
					_ = os.Remove(path)
					_ = os.WriteFile(path, []byte(content), 0o644)
					stamp()
					if closes {
						notify(path, decide.OpAttrib)
					}
					notify(path, decide.OpRemove)
					if closes {
						notify(path, decide.OpCreate|decide.OpMade)
					} else {
						notify(path, decide.OpCreate)
					}
					notify(path, decide.OpWrite)
					closed()
				case 11: // a writer that pauses mid-write
					if w, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC|os.O_CREATE, 0o644); err == nil {
						_, _ = w.WriteString(content[:1])
						stamp()
						notify(path, decide.OpWrite)
						pause := time.Duration(arg) * time.Millisecond
						finished[content[:1]] = finished[content[:1]] || pause >= pauseLimit
						time.Sleep(pause)
						_, _ = w.WriteString(content[1:])
						_ = w.Close()
						stamp()
						notify(path, decide.OpWrite)
						closed()
					}
				}
				synctest.Wait()
			}
			time.Sleep(10 * time.Second) // settle: re-checks run, backoffs end
			synctest.Wait()

			for i, c := range r.calls() {
				if c.err == nil && !finished[c.data] {
					t.Fatalf("call %d delivered %q, which no writer finished\ncalls: %s", i, c.data, r)
				}
			}
			if err := converged(path, string(base), r); err != nil {
				t.Fatalf("%v\ncalls: %s", err, r)
			}
			if i, data, ok := r.repeat(string(base)); ok {
				t.Fatalf("call %d repeats %q\ncalls: %s", i, data, r)
			}
		})
	})
}
