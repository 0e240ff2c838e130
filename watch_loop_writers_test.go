package file

import (
	"fmt"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/keepwatch/file/internal/decide"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Writers that take their time, where the kernel reports writers' closes:
// a file emptied, then written again by the next writer (truncate -s 0 f
// && cat new >> f; : > f; echo ... >> f), and a producer that holds the
// file open and pauses between its writes (a slow producer behind a shell
// redirect). Each is delivered once, whole. Writers that close are still
// read at their close, and a writer no event told of is still given only
// a short pause. The same on the real kernel: writers_pause_linux_test.go.

// truncated empties the file at path as truncate(1) and `: >` do, and its
// writer closes it: the truncation's write, then its close.
func truncated(t *testing.T, n *fakeNotifier, path string) {
	t.Helper()
	finish(t, n, path, "")
}

// A file emptied and then appended to, the appender starting right after
// the truncation's close or a while later (a process slow to start): the
// truncation's close does not deliver the empty file, the appender's close
// delivers the whole content, once.
func TestAFileEmptiedThenAppendedToIsDeliveredOnceWhole(t *testing.T) {
	for _, gap := range []time.Duration{0, 2 * time.Millisecond, 500 * time.Millisecond, decide.HeldOpenWindow - time.Millisecond} {
		t.Run(fmt.Sprintf("appender after %v", gap), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				path, r, n := watchedConfig(t)

				truncated(t, n, path)
				advance(gap)
				assert.Empty(t, r.calls(), "the empty file delivered at the truncation's close")
				finish(t, n, path, "v2\n") // cat new >> config.yaml
				closed := time.Now()
				synctest.Wait()
				assert.Equal(t, []string{"v2\n"}, r.contents())
				assert.Zero(t, time.Since(closed), "read at the appender's close")

				advance(decide.MaxWriterWait)
				assert.Equal(t, []string{"v2\n"}, r.contents(), "once")
			})
		})
	}
}

// An appender that writes and keeps the file open (a slow producer with
// >>) turns the doubt of the empty file into a wait for it: what it wrote
// is read once it has gone decide.HeldOpenWindow without writing, never the empty
// file before.
func TestAFileEmptiedThenAppendedToByAWriterThatKeepsItOpen(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path, r, n := watchedConfig(t)

		truncated(t, n, path)
		advance(decide.HeldOpenWindow / 2)
		writing(t, n, path, "v2\n")
		advance(decide.HeldOpenWindow - time.Nanosecond)
		assert.Empty(t, r.calls())
		advance(time.Nanosecond)
		assert.Equal(t, []string{"v2\n"}, r.contents())
	})
}

// A file emptied on purpose is delivered once no writer has appeared for
// decide.HeldOpenWindow after the close that emptied it. A writer that only opens
// and closes it meanwhile puts that off to a window after its close, but a
// file closed again and again is delivered decide.MaxWriterWait after the doubt
// began.
func TestAFileEmptiedOnPurposeIsDeliveredOnceNoWriterFollows(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path, r, n := watchedConfig(t)

		truncated(t, n, path)
		advance(decide.HeldOpenWindow - time.Nanosecond)
		assert.Empty(t, r.calls())
		advance(time.Nanosecond)
		assert.Equal(t, []string{""}, r.contents())

		// Written, then emptied again; another writer opens and closes it
		// halfway through the doubt, writing nothing.
		finish(t, n, path, "v2\n")
		synctest.Wait()
		truncated(t, n, path)
		advance(decide.HeldOpenWindow / 2)
		send(n, path, decide.OpClose)
		advance(decide.HeldOpenWindow - time.Nanosecond)
		assert.Equal(t, []string{"", "v2\n"}, r.contents())
		advance(time.Nanosecond)
		assert.Equal(t, []string{"", "v2\n", ""}, r.contents())

		// Closed again and again, each time before the window is out:
		// delivered at decide.MaxWriterWait from the first close.
		finish(t, n, path, "v3\n")
		synctest.Wait()
		truncated(t, n, path)
		began := time.Now()
		for time.Since(began)+decide.HeldOpenWindow/2 < decide.MaxWriterWait {
			advance(decide.HeldOpenWindow / 2)
			send(n, path, decide.OpClose)
		}
		synctest.Wait()
		assert.Len(t, r.calls(), 4)
		advance(time.Until(began.Add(decide.MaxWriterWait)))
		assert.Equal(t, []string{"", "v2\n", "", "v3\n", ""}, r.contents())
	})
}

// The emptying writer's close is told twice (the directory's watch and the
// file's own), both taken with the events queued at a read: the empty
// file is still delivered once, a window after the close.
func TestAnEmptiedFileWhoseCloseIsToldTwiceIsDeliveredOnceAfterTheWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "config.yaml")
		write(t, path, "v1\n")
		fs := &fakes{caps: linuxCaps, buffered: true}
		r, n := watchedThrough(t, path, fs)

		write(t, path, "")
		send(n, path, decide.OpWrite)
		fs.set(func(fs *fakes) {
			fs.onSync = func(n *fakeNotifier) {
				fs.onSync = nil
				send(n, path, decide.OpClose) // by the file's own watch
			}
		})
		send(n, path, decide.OpClose) // by the directory's
		advance(decide.HeldOpenWindow - time.Nanosecond)
		assert.Empty(t, r.calls())
		advance(time.Nanosecond)
		assert.Equal(t, []string{""}, r.contents())
		advance(decide.MaxWriterWait)
		assert.Len(t, r.calls(), 1)
	})
}

// A producer behind a shell redirect, `(cat part1; sleep 0.3; cat part2) >
// config.yaml`: the shell holds the file open until the last part is
// written, so no close comes between the parts. A pause shorter than
// decide.HeldOpenWindow reads nothing; the close reads the whole, at once.
func TestAProducerThatPausesHoldingTheFileOpenIsReadWhole(t *testing.T) {
	for _, pause := range []time.Duration{300 * time.Millisecond, 800 * time.Millisecond, decide.HeldOpenWindow - time.Nanosecond} {
		t.Run(fmt.Sprintf("pausing %v", pause), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				path, r, n := watchedConfig(t)

				writing(t, n, path, "") // the shell's O_TRUNC
				writing(t, n, path, "part: 1\n")
				advance(pause)
				assert.Empty(t, r.calls(), "read half done")
				finish(t, n, path, "part: 1\npart: 2\n")
				closed := time.Now()
				synctest.Wait()
				assert.Equal(t, []string{"part: 1\npart: 2\n"}, r.contents())
				assert.Zero(t, time.Since(closed), "read at the close")
			})
		})
	}
}

// A writer that keeps the file open is read once it has gone
// decide.HeldOpenWindow without a write, and its close reads again: a pause
// longer than that is read half done, then whole, the documented
// exception.
func TestAProducerPausingLongerThanTheWindowIsReadThenReadAgainAtItsClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path, r, n := watchedConfig(t)

		writing(t, n, path, "part: 1\n")
		advance(decide.HeldOpenWindow - time.Nanosecond)
		assert.Empty(t, r.calls())
		advance(time.Nanosecond)
		assert.Equal(t, []string{"part: 1\n"}, r.contents())
		advance(time.Second)
		finish(t, n, path, "part: 1\npart: 2\n")
		synctest.Wait()
		assert.Equal(t, []string{"part: 1\n", "part: 1\npart: 2\n"}, r.contents())
	})
}

// A writer that holds the file open and never stops writing for a
// window (a slow download into a redirect) is read at the cap,
// decide.MaxWaitFactor windows after its first write: decide.MaxWriterWait, the longest
// any writer holds a read back.
func TestAWriterThatKeepsWritingIsReadAtTheCap(t *testing.T) {
	require.Equal(t, decide.MaxWriterWait, decide.MaxWaitFactor*decide.HeldOpenWindow, "the cap of a heard writer is decide.MaxWriterWait")
	synctest.Test(t, func(t *testing.T) {
		path, r, n := watchedConfig(t)

		began := time.Now()
		var data string
		for i := 0; time.Since(began) < decide.MaxWriterWait; i++ {
			data += fmt.Sprintf("chunk: %d\n", i)
			writing(t, n, path, data)
			synctest.Wait()
			require.Empty(t, r.calls(), "read %v after the first write", time.Since(began))
			advance(decide.HeldOpenWindow * 9 / 10)
		}
		require.Len(t, r.calls(), 1)
		assert.Equal(t, decide.MaxWriterWait, r.calls()[0].at.Sub(began), "read at the cap")
	})
}

// A file the path leads to only now (a link retargeted to a release
// written just before, in a directory watched already: its writes went to
// no one), found written lately, is given decide.UnheardWriterPause for a writer
// no event told of, not the window of a writer heard writing: swaps are
// not slowed. A write heard from it then makes it a heard writer.
func TestAWriterNoEventToldOfIsGivenAShortPause(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path, other := linkedLayout(t)
		r, n := watchedOnLinux(t, path)
		t2 := filepath.Join(other, "t2.yaml")
		write(t, t2, "v2\n")
		stamp(t, t2)
		retarget(t, path, t2)
		send(n, path, decide.OpCreate) // IN_MOVED_TO
		advance(decide.UnheardWriterPause - time.Nanosecond)
		assert.Empty(t, r.calls())
		advance(time.Nanosecond)
		assert.Equal(t, []string{"v2\n"}, r.contents())

		t3 := filepath.Join(other, "t3.yaml")
		write(t, t3, "v3: half\n")
		stamp(t, t3)
		retarget(t, path, t3)
		send(n, path, decide.OpCreate)
		synctest.Wait()
		writing(t, n, t3, "v3: half\nand more\n") // its writer is at it, and heard now
		began := time.Now()
		advance(decide.HeldOpenWindow - time.Nanosecond)
		assert.Equal(t, []string{"v2\n"}, r.contents())
		advance(time.Nanosecond)
		assert.Equal(t, []string{"v2\n", "v3: half\nand more\n"}, r.contents())
		assert.Equal(t, decide.HeldOpenWindow, time.Since(began))
	})
}

// Where closes are not reported (macOS, BSD, Windows: the fsnotify
// backend), nothing says a writer holds the file open: a write is read
// once the file has gone the quiet window without another, so a producer
// that pauses longer is read half done, then whole (the documented
// limit); an emptied file appended to within the window is read whole.
func TestWithoutClosesWritesAreReadAfterTheQuietWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "config.yaml")
		write(t, path, "v1\n")
		r, n := watchedThrough(t, path, &fakes{})

		writing(t, n, path, "") // truncate -s 0
		advance(2 * time.Millisecond)
		writing(t, n, path, "v2\n") // >>
		advance(testQuiet)
		assert.Equal(t, []string{"v2\n"}, r.contents())

		writing(t, n, path, "part: 1\n")
		advance(300 * time.Millisecond)
		writing(t, n, path, "part: 1\npart: 2\n")
		advance(testQuiet)
		assert.Equal(t, []string{"v2\n", "part: 1\n", "part: 1\npart: 2\n"}, r.contents())
	})
}

// A burst of writes (a tool writing line by line) overflows the session's
// queue, and the events lost may include a close, or not: a writer heard
// writing keeps its window, so that a producer that pauses after such a
// burst is not read half done; a close that comes after the loss still
// reads at once, and one lost with the rest is made up for by the window.
func TestAWriterWhoseEventsWereLostKeepsItsWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path, r, n := watchedConfig(t)

		writing(t, n, path, "part: 1\n")
		send(n, "", decide.OpRescan) // the rest of the burst lost
		advance(800 * time.Millisecond)
		assert.Empty(t, r.calls(), "read half done")
		finish(t, n, path, "part: 1\npart: 2\n")
		synctest.Wait()
		assert.Equal(t, []string{"part: 1\npart: 2\n"}, r.contents(), "read at the close")

		// The close lost with the burst: read once the window is out.
		writing(t, n, path, "v3\n")
		send(n, "", decide.OpRescan)
		began := time.Now()
		advance(decide.HeldOpenWindow - time.Nanosecond)
		assert.Len(t, r.calls(), 1)
		advance(time.Nanosecond)
		assert.Equal(t, []string{"part: 1\npart: 2\n", "v3\n"}, r.contents())
		assert.Equal(t, decide.HeldOpenWindow, time.Since(began))
	})
}

// A read accepted at a wait's cap ends the holding back of reads for later
// writers, as any read accepted does: the next close's read that finds a
// later writer at work is left to that writer, not accepted because reads
// had been held back since long before (noLaterWriter accepts a read once
// writers have held reads back for decide.MaxWaitFactor windows).
func TestAReadAtTheCapEndsTheHoldingBackOfReads(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "config.yaml")
		write(t, path, "v1\n")
		fs := &fakes{caps: linuxCaps, buffered: true}
		r, n := watchedThrough(t, path, fs)
		laterWriter := func() {
			fs.set(func(fs *fakes) {
				fs.onSync = func(n *fakeNotifier) {
					fs.onSync = nil
					send(n, path, decide.OpWrite)
				}
			})
		}

		// A writer's close, read with the next writer at work: held back.
		write(t, path, "v2\n")
		send(n, path, decide.OpWrite)
		write(t, path, "v3: half")
		laterWriter()
		send(n, path, decide.OpClose)
		synctest.Wait()
		require.Empty(t, r.calls())
		// That writer never pauses for a window, and is read at the cap.
		for i := 0; len(r.calls()) == 0; i++ {
			require.Less(t, i, 100)
			writing(t, n, path, fmt.Sprintf("v3: %d\n", i))
			advance(decide.HeldOpenWindow * 9 / 10)
		}
		capped := r.contents()
		advance(decide.HeldOpenWindow) // its quiet's read, if the cap's missed a last write

		// The next writer's close, read with yet another writer at work.
		write(t, path, "v4\n")
		send(n, path, decide.OpWrite)
		write(t, path, "v5: half")
		laterWriter()
		send(n, path, decide.OpClose)
		synctest.Wait()
		assert.NotContains(t, r.contents(), "v5: half", "read with a later writer at work; before: %q", capped)
	})
}
