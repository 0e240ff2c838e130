package file

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/keepwatch/file/internal/decide"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Writers as the tools people use make them, one right after another with
// no gap, or keeping the file open after they wrote it. Each writer's close
// says that writer is done, not that the file is whole: the next one may
// already have truncated it. Whatever the order in which their events
// arrive, the callback gets only contents some writer finished, and none
// at all for the same bytes written again.

var backToBackPairs = flag.Int("backtoback.pairs", 50, "pairs of back-to-back identical writes in TestBackToBackIdenticalWritesLoop (make soak: 1000)")

// tool is one way of writing a file in place, as a program would.
type tool struct {
	name  string
	write func(t *testing.T, path, data string)
}

// cp copies a file holding data over path, in place: open with O_TRUNC,
// write, close, as cp(1) does.
func cp(t *testing.T, path, data string) {
	t.Helper()
	src := filepath.Join(t.TempDir(), "staged")
	write(t, src, data)
	run(t, "cp", src, path)
}

// shellRedirect writes data with a shell's `printf ... > path`.
func shellRedirect(t *testing.T, path, data string) {
	t.Helper()
	run(t, "sh", "-c", `printf '%s' "$1" > "$2"`, "sh", data, path)
}

func run(t *testing.T, name string, args ...string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		t.Skipf("no %s here: %v", name, err)
	}
	out, err := exec.Command(name, args...).CombinedOutput()
	require.NoError(t, err, "%s %s: %s", name, strings.Join(args, " "), out)
}

var (
	writeFile = tool{"os.WriteFile", func(t *testing.T, path, data string) { write(t, path, data) }}
	copyOver  = tool{"cp", cp}
	redirect  = tool{"a shell redirect", shellRedirect}
)

// noChangeDelivered checks that what was done to path, the same bytes
// written again, fired nothing: a sentinel change made after it is the
// first call.
func noChangeDelivered(t *testing.T, r *recorder, path, what string) {
	t.Helper()
	n := len(r.calls())
	sentinel(t, r, path)
	t.Logf("%s: %d callbacks", what, n)
	if n > 0 {
		t.Errorf("%s fired the callback %d times, with no change; calls: %s", what, n, trimmedCalls(r))
	}
	assert.Equal(t, []string{"sentinel\n"}, r.contents()[n:], "the sentinel, once")
}

// sequences of in-place writers, each right after the one before.
var backToBack = []struct {
	name    string
	writers []tool
}{
	{"os.WriteFile twice", []tool{writeFile, writeFile}},
	{"cp, then os.WriteFile twice", []tool{copyOver, writeFile, writeFile}},
	{"a shell redirect twice", []tool{redirect, redirect}},
	{"a shell redirect, then os.WriteFile", []tool{redirect, writeFile}},
}

// The same bytes written again, by any sequence of in-place writers with no
// gap between them, fire nothing: not the empty file that one writer's
// truncation showed while the previous one's close was being processed,
// and not the content again after it.
func TestBackToBackWritersOfTheSameBytesFireNothing(t *testing.T) {
	const rounds = 20
	for _, seq := range backToBack {
		t.Run(seq.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config.yaml")
			const data = "v: 0\n"
			write(t, path, data)
			_, r := watchedByEvents(t, path)
			for range rounds {
				for _, w := range seq.writers {
					w.write(t, path, data)
				}
				time.Sleep(time.Millisecond) // the next round is a new burst
			}
			noChangeDelivered(t, r, path, fmt.Sprintf("%d rounds of %s", rounds, seq.name))
		})
	}
}

// Back-to-back pairs of identical os.WriteFile calls, a round apart, fire
// the callback 0 times: `make test` runs 50 pairs, `make soak` 1,000
// (-backtoback.pairs).
func TestBackToBackIdenticalWritesLoop(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	const data = "v: 0\n"
	write(t, path, data)
	_, r := watchedByEvents(t, path)
	for range *backToBackPairs {
		write(t, path, data)
		write(t, path, data)
		time.Sleep(time.Millisecond)
	}
	noChangeDelivered(t, r, path, fmt.Sprintf("%d back-to-back pairs of identical writes", *backToBackPairs))
}

// Different bytes, written back to back: every content the callback gets is
// one that some writer finished (never the empty file, never a part), and
// the last is what the file holds.
func TestBackToBackWritersOfDifferentBytesDeliverOnlyFinishedContents(t *testing.T) {
	const rounds = 15
	for _, seq := range backToBack {
		t.Run(seq.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config.yaml")
			done := newFinished("v: 0\n")
			write(t, path, "v: 0\n")
			_, r := watchedByEvents(t, path)
			var last string
			for i := range rounds {
				for j, w := range seq.writers {
					last = fmt.Sprintf("round: %d\nwriter: %d\npad: %s\n", i, j, strings.Repeat("x", 4000))
					w.write(t, path, last)
					done.add(last)
				}
				time.Sleep(time.Millisecond)
			}
			r.waitContent(t, last)
			t.Logf("%d rounds of %s: %d callbacks", rounds, seq.name, len(r.calls()))
			done.check(t, r)
			assert.Empty(t, r.errs())
		})
	}
}

// Found writing these tests: a file renamed over the path, and an in-place
// writer right after it, which pauses a millisecond mid-write. The rename's
// event says a whole file is there; by the time it is read, the next
// writer may have truncated it and written half. That half is no content
// any writer finished.
func TestAWriterRightAfterARenameOverIsNotReadHalfDone(t *testing.T) {
	const rounds = 20
	path := filepath.Join(t.TempDir(), "config.yaml")
	write(t, path, "v: 0\n")
	done := newFinished("v: 0\n")
	_, r := watchedByEvents(t, path)
	var last string
	for i := range rounds {
		renamed := fmt.Sprintf("round: %d\nby: rename\npad: %s\n", i, strings.Repeat("x", 1000))
		done.add(renamed)
		replace(t, path, renamed)
		last = fmt.Sprintf("round: %d\nby: in place\npad: %s\n", i, strings.Repeat("y", 1000))
		writeInTwo(t, path, last, time.Millisecond, done)
		time.Sleep(5 * time.Millisecond)
	}
	r.waitContent(t, last)
	t.Logf("%d rounds: %d callbacks", rounds, len(r.calls()))
	done.check(t, r)
	assert.Empty(t, r.errs())
}

// writeInTwo writes data to path in place in two halves, pausing between
// them, and adds it to done. If the pause ran past midWritePause (the
// machine was busy), the half is one a watch may read, the documented
// exception, and is added too.
func writeInTwo(t *testing.T, path, data string, pause time.Duration, done *finished) {
	t.Helper()
	fd, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	require.NoError(t, err)
	defer fd.Close()
	done.add(data)
	_, err = fd.WriteString(data[:len(data)/2])
	require.NoError(t, err)
	paused := time.Now()
	time.Sleep(pause)
	if time.Since(paused) >= midWritePause {
		done.add(data[:len(data)/2])
	}
	_, err = fd.WriteString(data[len(data)/2:])
	require.NoError(t, err)
	require.NoError(t, fd.Close())
}

// heldOpenDeadline is how long a test keeps a writer's file open waiting for the
// delivery that must come while it is: wfx's 5 s, far beyond the quiet
// window a writer that keeps the file open is read after.
const heldOpenDeadline = 5 * time.Second

// waitContentWhileOpen waits, for as long as a test keeps a writer's file
// open, until the last call delivered want.
func waitContentWhileOpen(t *testing.T, r *recorder, want string) {
	t.Helper()
	require.Eventually(t, func() bool {
		c, ok := r.last()
		return ok && c.err == nil && c.data == want
	}, heldOpenDeadline, tick, "%q not delivered in %v while its writer kept the file open (the stock provider reads at once); calls: %s",
		want, heldOpenDeadline, r)
}

// A writer that keeps the file open after writing, as long-lived writers
// and tests do, is read once it has gone a short quiet window without
// writing, while it still holds the file; a later write through the same
// handle is read the same way; and its close reads the file again only if
// the content changed then.
func TestAWriterThatKeepsTheFileOpenIsReadWhileItHoldsIt(t *testing.T) {
	t.Parallel() // read after decide.HeldOpenWindow, twice: it runs beside the others
	path := filepath.Join(t.TempDir(), "config.yaml")
	write(t, path, "v1\n")
	_, r := watchedByEvents(t, path)

	fd, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	require.NoError(t, err)
	defer fd.Close()
	rewrite := func(data string) time.Time {
		t.Helper()
		require.NoError(t, fd.Truncate(0))
		_, err := fd.WriteAt([]byte(data), 0)
		require.NoError(t, err)
		return time.Now()
	}

	at := rewrite("v2\n")
	waitContentWhileOpen(t, r, "v2\n")
	r.logDelay(t, "a write, its writer keeping the file open", at)

	at = rewrite("v3: longer\n")
	waitContentWhileOpen(t, r, "v3: longer\n")
	r.logDelay(t, "a second write through the same open handle", at)

	// Its close, with nothing new, reads nothing new.
	require.NoError(t, fd.Close())
	sentinel(t, r, path)
	assert.Equal(t, []string{"v2\n", "v3: longer\n", "sentinel\n"}, r.contents())

	// A write that the writer closes right after is read at its close.
	fd, err = os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	require.NoError(t, err)
	_, err = fd.WriteString("v4\n")
	require.NoError(t, err)
	_, err = fd.WriteString("v4: at the close\n")
	require.NoError(t, err)
	require.NoError(t, fd.Close())
	closed := time.Now()
	r.waitContent(t, "v4\nv4: at the close\n")
	r.logDelay(t, "a write closed at once", closed)
	assert.Empty(t, r.errs())
}

// A writer that keeps the file open, writes, and writes again just before
// it closes: the first content is read while it holds the file, the last
// at its close.
func TestAWriterThatKeepsTheFileOpenIsReadAgainAtItsClose(t *testing.T) {
	t.Parallel() // read after decide.HeldOpenWindow: it runs beside the others
	path := filepath.Join(t.TempDir(), "config.yaml")
	write(t, path, "v1\n")
	_, r := watchedByEvents(t, path)

	fd, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	require.NoError(t, err)
	defer fd.Close()
	_, err = fd.WriteString("v2\n")
	require.NoError(t, err)
	waitContentWhileOpen(t, r, "v2\n")

	_, err = fd.WriteString("v3\n") // appended: the file holds v2 v3
	require.NoError(t, err)
	require.NoError(t, fd.Close())
	closed := time.Now()
	r.waitContent(t, "v2\nv3\n")
	r.logDelay(t, "the change made just before the close", closed)
	assert.Equal(t, []string{"v2\n", "v2\nv3\n"}, r.contents())
}

// An empty file held open is never delivered: a slow producer behind a
// shell redirect truncates the file at once and writes it when it is
// ready, however long past the quiet window that is.
func TestAnEmptyFileHeldOpenIsNeverDelivered(t *testing.T) {
	needCaps(t, decide.Caps{Closes: true}, "a writer close")
	const startup = 3 * defaultQuietWindow // far beyond a writer's quiet window
	full := strings.Repeat("key: value\n", 200)
	cases := []struct {
		name  string
		write func(t *testing.T, path string)
	}{
		{"a handle truncated, written later", func(t *testing.T, path string) {
			fd, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
			require.NoError(t, err)
			defer fd.Close()
			time.Sleep(startup)
			_, err = fd.WriteString(full)
			require.NoError(t, err)
			require.NoError(t, fd.Close())
		}},
		{"sh -c 'slow-producer > config.yaml'", func(t *testing.T, path string) {
			script := fmt.Sprintf(`exec > "$1"; sleep %.3f; printf '%%s' "$2"`, startup.Seconds())
			run(t, "sh", "-c", script, "sh", path, full)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config.yaml")
			write(t, path, "v1\n")
			_, r := watchedByEvents(t, path)
			c.write(t, path)
			closed := time.Now()
			r.waitContent(t, full)
			r.logDelay(t, c.name+", from its close", closed)
			assert.Equal(t, []string{full}, r.contents(), "never the empty file")
			assert.Empty(t, r.errs())
		})
	}
}

// A file a writer truncates, holds open past the quiet window and closes
// with nothing written (`: > config.yaml` behind a producer that had
// nothing to say) is delivered empty soon after that close, not held for
// decide.MaxWriterWait. Where the kernel says who writes, the quiet
// window's read finds the file empty and held, and waits for the writer;
// where no close is told (the fsnotify backend), only the kernel, asked
// again, can say that the writer is gone, and it was not asked again
// before MaxWriterWait (found by TestConvergence under -backend=fsnotify:
// the sequence's last operation, a producer that wrote nothing, or a file
// made again in a directory made again, read before its writer wrote and
// written before the directory's watch came).
func TestAFileEmptiedAndHeldOpenIsDeliveredSoonAfterItsClose(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	write(t, path, "v1\n")
	_, r := watchedByEvents(t, path)
	fd, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	require.NoError(t, err)
	time.Sleep(3 * defaultQuietWindow) // the quiet window's read finds it empty, and held
	require.NoError(t, fd.Close())
	closed := time.Now()
	require.Eventually(t, func() bool {
		c, ok := r.last()
		return ok && c.err == nil && c.data == ""
	}, decide.MaxWriterWait/3, tick, "the empty file never delivered; calls: %s", r)
	r.logDelay(t, "an empty file, from its close", closed)
	assert.Equal(t, []string{""}, r.contents())
}

// A write in place, and right after it a chmod of the file's directory, as
// a deploy tool may do: every write is delivered, whenever the chmod's
// event is taken.
func TestAWriteFollowedByAChmodOfItsDirectoryIsDelivered(t *testing.T) {
	sub := filepath.Join(t.TempDir(), "sub")
	require.NoError(t, os.Mkdir(sub, 0o755))
	path := filepath.Join(sub, "config.yaml")
	write(t, path, "v1\n")
	_, r := watchedByEvents(t, path)
	for i := 2; i <= 21; i++ {
		want := fmt.Sprintf("v%d\n", i)
		write(t, path, want)
		require.NoError(t, os.Chmod(sub, 0o755))
		r.waitContent(t, want)
	}
}

// Writers that take their time, on the real kernel, driven by the tools
// people use: a file emptied, then appended to (truncate(1) and a shell's
// `: >`, then `>>` or tee -a), and a producer behind a shell redirect that
// pauses between its writes. Every delivery is judged: never the empty
// file, never a part. The same transitions in virtual time:
// slow_writers_test.go.

// bashScript runs script with bash (its $EPOCHREALTIME times a pause
// without a fork) and returns what it wrote to stderr, and how long it
// took.
func bashScript(t *testing.T, script string, args ...string) (stderr string, took time.Duration) {
	t.Helper()
	for _, tool := range []string{"bash", "truncate", "tee", "cat"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s here: %v", tool, err)
		}
	}
	var errOut bytes.Buffer
	cmd := exec.Command("bash", append([]string{"-c", script, "bash"}, args...)...)
	cmd.Env = append(os.Environ(), "LC_ALL=C") // $EPOCHREALTIME with a decimal point
	cmd.Stderr = &errOut
	began := time.Now()
	err := cmd.Run()
	took = time.Since(began)
	require.NoError(t, err, "bash -c %q: %s", script, errOut.String())
	return errOut.String(), took
}

// staged writes data to a file of its own beside nothing watched, for a
// tool to copy from, and returns its path.
func staged(t *testing.T, name, data string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, []byte(data), 0o644))
	return p
}

// roundContent is the content of one round of a test: a few lines, so that
// a part of it would still parse.
func roundContent(round int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "round: %d\n", round)
	for i := range 100 {
		fmt.Fprintf(&b, "key%d: value %d\n", i, round)
	}
	return b.String()
}

// A file emptied and then written again by the next tool, as scripts and
// people rewrite a config: each update is delivered once, whole, at the
// appender's close, never the empty file the truncation left (unless the
// whole command took longer than decide.HeldOpenWindow, so that the appender may
// have started after it: then the empty file may be delivered, the
// documented behaviour, and is logged).
func TestAFileEmptiedThenAppendedToByRealToolsIsDeliveredOnceWhole(t *testing.T) {
	t.Parallel()
	needCaps(t, decide.Caps{Closes: true}, "a writer's close")
	cases := []struct{ name, script string }{
		{"truncate -s 0 f && cat new >> f", `truncate -s 0 "$1" && cat "$2" >> "$1"`},
		{": > f; cat new >> f", `: > "$1"; cat "$2" >> "$1"`},
		{": > f; echo ... >> f", `: > "$1"; echo -n "$3" >> "$1"`},
		{"truncate -s 0 f && tee -a f < new", `truncate -s 0 "$1" && tee -a "$1" < "$2" > /dev/null`},
	}
	const rounds = 5
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "config.yaml")
			write(t, path, "v: 0\n")
			_, r := watchedByEvents(t, path, WithLogger(testLogger(t)))
			var want []string
			emptyMayCome := false
			for i := 1; i <= rounds; i++ {
				data := roundContent(i)
				_, took := bashScript(t, c.script, path, staged(t, "new.yaml", data), data)
				if took >= decide.HeldOpenWindow {
					emptyMayCome = true
					t.Logf("round %d took %v: the appender may have begun after the window", i, took)
				}
				r.waitContent(t, data)
				want = append(want, data)
			}
			got := r.contents()
			if emptyMayCome {
				got = slicesWithout(got, "")
			}
			assert.Equal(t, want, got, "each update once, whole, never the empty file; calls: %s", trimmedCalls(r))
			assert.Empty(t, r.errs())
		})
	}
}

// slicesWithout returns s without the elements equal to v.
func slicesWithout(s []string, v string) []string {
	var out []string
	for _, e := range s {
		if e != v {
			out = append(out, e)
		}
	}
	return out
}

// A producer behind a shell redirect that pauses between its writes, 300
// and 800 ms, as `(cat part1; sleep 0.3; cat part2) > config.yaml`, curl
// from a slow server or two templating steps do: the shell holds the file
// open until the last part is written, and the file is delivered whole at
// its close, once; never half, never empty. (A pause the machine's load
// stretched to decide.HeldOpenWindow or more may be read half done, then whole:
// the documented exception, logged.)
func TestAProducerPausingBehindARedirectIsDeliveredWhole(t *testing.T) {
	t.Parallel() // its pauses take most of a second: they run beside the others
	needCaps(t, decide.Caps{Closes: true}, "a writer's close")
	for _, c := range []struct {
		pause  time.Duration
		rounds int
	}{{300 * time.Millisecond, 3}, {800 * time.Millisecond, 2}} {
		t.Run(fmt.Sprintf("pausing %v", c.pause), func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "config.yaml")
			write(t, path, "v: 0\n")
			_, r := watchedByEvents(t, path, WithLogger(testLogger(t)))
			// The pause between the two writes is no longer than from
			// after the first cat to after the second.
			const script = `(cat "$2"; a=$EPOCHREALTIME; sleep "$4"; cat "$3"; b=$EPOCHREALTIME; echo "$a $b" >&2) > "$1"`
			done := newFinished()
			var want []string
			stretched := false
			for i := 1; i <= c.rounds; i++ {
				data := roundContent(i)
				half := len(data) / 2
				done.add(data)
				stderr, _ := bashScript(t, script, path, staged(t, "part1", data[:half]), staged(t, "part2", data[half:]),
					strconv.FormatFloat(c.pause.Seconds(), 'f', 3, 64))
				if paused := pauseBetween(t, stderr); paused >= decide.HeldOpenWindow {
					stretched = true
					done.add(data[:half])
					t.Logf("round %d: the pause took %v, past the window: its half may be delivered", i, paused)
				}
				r.waitContent(t, data)
				want = append(want, data)
			}
			done.check(t, r) // never the empty file, never a part
			if !stretched {
				assert.Equal(t, want, r.contents(), "each update once, whole")
			}
			assert.Empty(t, r.errs())
		})
	}
}

// pauseBetween parses the two $EPOCHREALTIME stamps the script wrote.
func pauseBetween(t *testing.T, stderr string) time.Duration {
	t.Helper()
	f := strings.Fields(stderr)
	require.Len(t, f, 2, "stamps: %q", stderr)
	a, err := strconv.ParseFloat(f[0], 64)
	require.NoError(t, err)
	b, err := strconv.ParseFloat(f[1], 64)
	require.NoError(t, err)
	return time.Duration((b - a) * float64(time.Second))
}

// A writer that keeps the file open after writing it (test code, a
// long-lived writer) is still read while it holds it, once it has gone
// decide.HeldOpenWindow without writing: within what tests of such writers wait
// (siemens/wfx polls for 5 s). Its close, with nothing new, fires nothing.
func TestAWriterHoldingTheFileOpenIsStillReadWithinTheWindow(t *testing.T) {
	t.Parallel()
	const deadline = 5 * time.Second // wfx's
	path := filepath.Join(t.TempDir(), "config.yaml")
	write(t, path, "v: 0\n")
	_, r := watchedByEvents(t, path, WithLogger(testLogger(t)))

	fd, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	require.NoError(t, err)
	defer fd.Close()
	data := roundContent(1)
	_, err = fd.WriteString(data[:len(data)/2])
	require.NoError(t, err)
	_, err = fd.WriteString(data[len(data)/2:])
	require.NoError(t, err)
	wrote := time.Now()
	require.Eventually(t, func() bool {
		c, ok := r.last()
		return ok && c.data == data
	}, deadline, tick, "not delivered within %v while its writer holds the file open; calls: %s", deadline, trimmedCalls(r))
	r.logDelay(t, "a writer holding the file open", wrote)
	require.NoError(t, fd.Close())
	sentinel(t, r, path)
	assert.Equal(t, []string{data, "sentinel\n"}, r.contents())
	assert.Empty(t, r.errs())
}

// A file whose openers the watch counts is removed and made again by a
// producer that pauses mid-write (rm config.yaml; slow-producer >
// config.yaml), right after an in-place write: the count is of the old
// file, and says nothing of the new one's writer. The new file is read
// asking the kernel, and its half is never delivered.
func TestAFileMadeAgainUnderACountedWatchIsNeverDeliveredHalfDone(t *testing.T) {
	t.Parallel() // its pauses take most of a second: they run beside the others
	needCaps(t, decide.Caps{Opens: true}, "a file's opens")
	path := filepath.Join(t.TempDir(), "config.yaml")
	write(t, path, "v: 0\n")
	if !kernelTellsWriters(t) {
		t.Skip("the kernel does not say who holds a file open for writing here")
	}
	_, r := watchedByEvents(t, path, WithLogger(testLogger(t)))
	done := newFinished()
	for i := 1; i <= 3; i++ {
		in := fmt.Sprintf("v: %d-in-place\n", i)
		done.add(in)
		write(t, path, in) // the count of its openers begins, or goes on
		data := roundContent(i)
		half := len(data) / 2
		done.add(data)
		require.NoError(t, os.Remove(path))
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
		require.NoError(t, err)
		_, err = f.WriteString(data[:half])
		require.NoError(t, err)
		time.Sleep(300 * time.Millisecond) // well within decide.HeldOpenWindow
		_, err = f.WriteString(data[half:])
		require.NoError(t, err)
		require.NoError(t, f.Close())
		r.waitContent(t, data)
	}
	done.check(t, r) // never the empty file, never a part
}

// A process that keeps the file open to read it (a viewer, a program that
// holds its config open) is counted as holding it, and the count cannot
// tell a reader from a writer that has not written yet: an update while
// it holds the file is read once the kernel, asked after two short pauses,
// says no writer holds it, not a second later as a writer's pause would
// be.
func TestAReaderHoldingTheFileOpenHoldsNoUpdateBack(t *testing.T) {
	needCaps(t, decide.Caps{Opens: true}, "a file's opens")
	path := filepath.Join(t.TempDir(), "config.yaml")
	write(t, path, "v: 0\n")
	if !kernelTellsWriters(t) {
		t.Skip("the kernel does not say who holds a file open for writing here")
	}
	_, r := watchedByEvents(t, path)
	write(t, path, "v: 1\n") // the count of its openers begins
	r.waitContent(t, "v: 1\n")
	viewer, err := os.Open(path)
	require.NoError(t, err)
	defer viewer.Close()
	for i := 2; i <= 4; i++ {
		want := fmt.Sprintf("v: %d\n", i)
		wrote := time.Now()
		write(t, path, want)
		r.waitContent(t, want)
		assert.Less(t, time.Since(wrote), decide.HeldOpenWindow, "update %d taken for a writer's pause", i)
	}
}
