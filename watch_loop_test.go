package file

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/keepwatch/file/internal/decide"

	"github.com/keepwatch/file/internal/events"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// These tests drive one session through a scripted notifier in a synctest
// bubble, so the quiet window and the re-check are timed exactly.

func TestInPlaceWritesAreReadAfterAQuietWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "config.yaml")
		write(t, path, "v1\n")
		_, r, fs := watchedFake(t, path, WithQuietWindow(testQuiet))
		n := fs.last()

		write(t, path, "") // truncate
		send(n, path, decide.OpWrite)
		advance(testQuiet / 2)
		write(t, path, "half")
		send(n, path, decide.OpWrite)
		advance(testQuiet - time.Nanosecond)
		assert.Empty(t, r.calls(), "writes are still under way")

		write(t, path, "half and the rest\n")
		send(n, path, decide.OpWrite)
		advance(testQuiet - time.Nanosecond)
		assert.Empty(t, r.calls())
		advance(time.Nanosecond)
		assert.Equal(t, []string{"half and the rest\n"}, r.contents())
	})
}

// watchedQuietFile watches a file holding "v1\n" on the fake notifier,
// with the quiet window testQuiet and no closes reported: in-place writes
// are read when they go quiet, or at the cap.
func watchedQuietFile(t *testing.T) (string, *recorder, *fakeNotifier) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	write(t, path, "v1\n")
	_, r, fs := watchedFake(t, path, WithQuietWindow(testQuiet))
	return path, r, fs.last()
}

func TestAFileWrittenWithoutPauseIsStillRead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path, r, n := watchedQuietFile(t)

		start := time.Now()
		for i := 0; time.Since(start) < decide.MaxWaitFactor*testQuiet; i++ {
			write(t, path, "line "+time.Since(start).String()+"\n")
			send(n, path, decide.OpWrite)
			advance(testQuiet / 4)
			if time.Since(start) < decide.MaxWaitFactor*testQuiet {
				require.Empty(t, r.calls(), "read before the cap, at %v", time.Since(start))
			}
		}
		require.Len(t, r.contents(), 1, "read once the cap of %d windows was reached", decide.MaxWaitFactor)
	})
}

// The cap reads the file wherever its writers are, but a file it finds
// empty is a writer's truncation far more often than a content: it is
// doubted for a window, as any other read's empty file is. Found empty
// there by the cap in CI (fsnotify's backend, under -race), it was
// delivered.
func TestACapThatFindsTheFileEmptyDoesNotDeliverIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path, r, n := watchedQuietFile(t)

		start := time.Now()
		for time.Since(start) < decide.MaxWaitFactor*testQuiet {
			write(t, path, "line "+time.Since(start).String()+"\n")
			send(n, path, decide.OpWrite)
			write(t, path, "") // the next writer's truncation, when the cap comes
			advance(testQuiet / 4)
		}
		require.Empty(t, r.calls(), "the cap delivered the file a writer had just truncated")

		write(t, path, "v2\n")
		send(n, path, decide.OpWrite)
		advance(testQuiet)
		require.Equal(t, []string{"v2\n"}, r.contents())

		// An empty file that stays so is a content: once the writes stop,
		// the quiet window and the doubt's pass, and it is delivered.
		for time.Since(start) < 3*decide.MaxWaitFactor*testQuiet {
			write(t, path, "")
			send(n, path, decide.OpWrite)
			advance(testQuiet / 4)
		}
		advance(2 * testQuiet)
		require.Equal(t, []string{"v2\n", ""}, r.contents())
	})
}

// Past its cap, the wait reads at the first gap between writes (decide.CapGap),
// not wherever a writer is: a writer's writes are closer together than
// that. Writes that never pause so long are read a window after the cap.
func TestACapReadsBetweenWritersNotInsideOne(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path, r, n := watchedQuietFile(t)
		writeNow := func(data string) {
			write(t, path, data)
			send(n, path, decide.OpWrite)
		}

		start := time.Now()
		for time.Since(start) < decide.MaxWaitFactor*testQuiet-testQuiet/4 {
			writeNow("whole " + time.Since(start).String() + "\n")
			advance(testQuiet / 5)
		}
		advance(time.Until(start.Add(decide.MaxWaitFactor*testQuiet - time.Millisecond)))
		writeNow("part") // a millisecond before the cap
		advance(2 * time.Millisecond)
		require.Empty(t, r.calls(), "read inside a writer")
		writeNow("part and the rest\n")
		advance(decide.CapGap)
		require.Equal(t, []string{"part and the rest\n"}, r.contents())

		start = time.Now()
		for i := 0; time.Since(start) < decide.MaxWaitFactor*testQuiet+testQuiet; i++ {
			writeNow(fmt.Sprintf("line %d\n", i))
			advance(time.Millisecond)
			if time.Since(start) < decide.MaxWaitFactor*testQuiet+testQuiet {
				require.Len(t, r.contents(), 1, "read inside a writer, at %v", time.Since(start))
			}
		}
		require.Len(t, r.contents(), 2, "writes that never pause are read a window after the cap")
	})
}

func TestAtomicUpdatesAreReadAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "config.yaml")
		write(t, path, "v1\n")
		_, r, fs := watchedFake(t, path, WithQuietWindow(time.Hour))
		start := time.Now()

		replace(t, path, "v2\n")
		send(fs.last(), path, decide.OpCreate)
		synctest.Wait()
		assert.Equal(t, []string{"v2\n"}, r.contents())
		assert.Zero(t, time.Since(start), "no time passed")
	})
}

func TestAnEmptyFileWaitsForTheQuietWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "config.yaml")
		write(t, path, "v1\n")
		_, r, fs := watchedFake(t, path, WithQuietWindow(testQuiet))

		// Created empty, as `cp` or `>` do before they write: no read yet.
		replace(t, path, "")
		send(fs.last(), path, decide.OpCreate)
		synctest.Wait()
		assert.Empty(t, r.calls())
		// Still empty after the window: that is the file's content.
		advance(testQuiet)
		assert.Equal(t, []string{""}, r.contents())
	})
}

func TestOnlyEventsOnThePathsChainCauseAReRead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "config.yaml")
		write(t, path, "v1\n")
		_, r, fs := watchedFake(t, path)
		n := fs.last()

		// Change the content behind the watch's back, so only a read finds it.
		sneak(t, path, "v2\n")
		send(n, filepath.Join(dir, "other.yaml"), decide.OpCreate)
		send(n, filepath.Join(dir, "config.yaml.swp"), decide.OpWrite)
		synctest.Wait()
		assert.Empty(t, r.calls(), "events on other files read nothing")

		send(n, path, decide.OpAttrib)
		synctest.Wait()
		assert.Empty(t, r.calls(), "a chmod of a readable file cannot change it")

		send(n, path, decide.OpWrite|decide.OpAttrib)
		advance(defaultQuietWindow)
		assert.Equal(t, []string{"v2\n"}, r.contents())
	})
}

// sneak rewrites path in place with data of the same length and puts its
// modification time back, so that its stat does not change.
func sneak(t *testing.T, path, data string) {
	t.Helper()
	info, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, int64(len(data)), info.Size())
	write(t, path, data)
	require.NoError(t, os.Chtimes(path, info.ModTime(), info.ModTime()))
}

func TestTheRecheckFindsChangesNoEventReported(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "config.yaml")
		write(t, path, "v1\n")
		_, r, _ := watchedFake(t, path, WithRecheckInterval(time.Second), WithQuietWindow(testQuiet))

		replace(t, path, "v2\n") // as on NFS: no event
		advance(time.Second)
		assert.Empty(t, r.calls(), "a change seen by the re-check waits a quiet window")
		advance(testQuiet)
		assert.Equal(t, []string{"v2\n"}, r.contents())

		require.NoError(t, os.Remove(path))
		advance(time.Second)
		require.Len(t, r.errs(), 1)
		write(t, path, "v3\n")
		advance(time.Second + testQuiet)
		assert.Equal(t, []string{"v2\n", "v3\n"}, r.contents())
	})
}

// Found by ExampleWithPolling: a poll faster than the quiet window must not
// keep putting the read off until the wait's cap.
func TestAPollFasterThanTheQuietWindowReadsAfterOneWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "config.yaml")
		write(t, path, "v1\n")
		const window = 100 * time.Millisecond
		_, r := watched(t, path, WithPolling(10*time.Millisecond), WithQuietWindow(window))
		synctest.Wait()

		replace(t, path, "v2\n")
		advance(10*time.Millisecond + window)
		assert.Equal(t, []string{"v2\n"}, r.contents())
	})
}

func TestTheRecheckReadsOnlyWhenTheStatChanged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "config.yaml")
		write(t, path, "v1\n")
		_, r, _ := watchedFake(t, path, WithRecheckInterval(time.Second), WithQuietWindow(testQuiet))

		sneak(t, path, "v2\n") // same inode, size and mtime
		advance(10 * time.Second)
		assert.Empty(t, r.calls(), "an unchanged stat is not read")

		later := time.Now().Add(time.Hour)
		require.NoError(t, os.Chtimes(path, later, later))
		advance(time.Second + testQuiet)
		assert.Equal(t, []string{"v2\n"}, r.contents())
	})
}

func TestTheRecheckCanBeTurnedOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "config.yaml")
		write(t, path, "v1\n")
		_, r, _ := watchedFake(t, path, WithRecheckInterval(0))
		replace(t, path, "v2\n")
		advance(24 * time.Hour)
		assert.Empty(t, r.calls())
	})
}

// The watch moves with the symlink chain: a retargeted link gets its new
// directory watched and its old one dropped, and the notifier is asked for
// the events of exactly the names the resolution now looks up.
func TestWatchesFollowTheChain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		root := t.TempDir()
		for _, d := range []string{"etc", "a", "b"} {
			require.NoError(t, os.Mkdir(filepath.Join(root, d), 0o755))
		}
		write(t, filepath.Join(root, "a", "real"), "a\n")
		write(t, filepath.Join(root, "b", "real"), "b\n")
		link := filepath.Join(root, "etc", "config")
		require.NoError(t, os.Symlink("../a/real", link))
		_, r, fs := watchedFake(t, link)
		n := fs.last()
		assert.ElementsMatch(t, []string{filepath.Join(root, "etc"), filepath.Join(root, "a")}, n.watched())
		assert.Contains(t, n.wanted(), link)
		assert.Contains(t, n.wanted(), filepath.Join(root, "a", "real"))

		require.NoError(t, os.Remove(link))
		require.NoError(t, os.Symlink("../b/real", link))
		send(n, link, decide.OpCreate)
		synctest.Wait()
		assert.Equal(t, []string{"b\n"}, r.contents())
		assert.ElementsMatch(t, []string{filepath.Join(root, "etc"), filepath.Join(root, "b")}, n.watched())
		assert.Contains(t, n.wanted(), filepath.Join(root, "b", "real"))
		assert.NotContains(t, n.wanted(), filepath.Join(root, "a", "real"), "forgotten")
	})
}

// Found by make soak: the chain moves again while the watch on its new
// directory is being added, so no event for that move will ever come (the
// directory was not watched when it moved). The check after the Add, made
// again from the directories just watched on (what came before them was
// watched all along, and a move there is told by an event), sees it, and it
// must be acted on at once, not at the next event (with re-checks off,
// never).
func TestAChainThatMovesDuringTheAddIsFollowed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		root := t.TempDir()
		for _, d := range []string{"etc", "a", "b", "c"} {
			require.NoError(t, os.Mkdir(filepath.Join(root, d), 0o755))
		}
		for _, d := range []string{"a", "b", "c"} {
			write(t, filepath.Join(root, d, "real"), d+"\n")
		}
		link := filepath.Join(root, "etc", "config")
		require.NoError(t, os.Symlink("../a/real", link))
		_, r, fs := watchedFake(t, link)
		n := fs.last()

		var once sync.Once
		fs.set(func(fs *fakes) {
			fs.addErr = func(dir string) error {
				if dir == filepath.Join(root, "b") {
					once.Do(func() { // b/real made a link to c's, before b's watch
						real := filepath.Join(root, "b", "real")
						require.NoError(t, os.Remove(real))
						require.NoError(t, os.Symlink("../c/real", real))
					})
				}
				return nil
			}
		})
		require.NoError(t, os.Remove(link))
		require.NoError(t, os.Symlink("../b/real", link))
		send(n, link, decide.OpCreate)
		synctest.Wait()
		assert.Equal(t, []string{"b\n", "c\n"}, r.contents())
		assert.ElementsMatch(t, []string{filepath.Join(root, "etc"), filepath.Join(root, "b"), filepath.Join(root, "c")}, n.watched())
	})
}

// A directory the new chain leads through that is removed between the
// read and its watch's Add (kubelet's old payload, a tree removed whole):
// the Add fails, the path resolves elsewhere or nowhere now, and what the
// read found is no longer what is there. It is looked at again; here the
// file is gone, and that is reported once it has lasted a window, not left
// to the re-check. (Found by TestAStockRestartWrapperWorksUnchanged on the
// fsnotify backend, whose events on the removed tree told nothing more.)
func TestADirectoryRemovedBeforeItsWatchIsAddedIsLookedAtAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		root := t.TempDir()
		for _, d := range []string{"etc", "a", "b"} {
			require.NoError(t, os.Mkdir(filepath.Join(root, d), 0o755))
		}
		for _, d := range []string{"a", "b"} {
			write(t, filepath.Join(root, d, "real"), d+"\n")
		}
		link := filepath.Join(root, "etc", "config")
		require.NoError(t, os.Symlink("../a/real", link))
		_, r, fs := watchedFake(t, link, WithQuietWindow(testQuiet))
		n := fs.last()

		var once sync.Once
		fs.set(func(fs *fakes) {
			fs.addErr = func(dir string) error {
				if dir != filepath.Join(root, "b") {
					return nil
				}
				gone := false
				once.Do(func() { // removed after the read, before its watch
					require.NoError(t, os.RemoveAll(dir))
					gone = true
				})
				if gone {
					return syscall.ENOENT
				}
				return nil
			}
		})
		require.NoError(t, os.Remove(link))
		require.NoError(t, os.Symlink("../b/real", link))
		send(n, link, decide.OpCreate)
		synctest.Wait()
		assert.Equal(t, []string{"b\n"}, r.contents())

		advance(testQuiet)
		require.Len(t, r.errs(), 1, "the file went with its directory: %s", r)
		assert.ErrorIs(t, r.errs()[0], os.ErrNotExist)
	})
}

// A file missing for less than a quiet window, as in a remove-then-create
// swap of ..data, is the middle of an update: nothing is reported, and the
// new content is delivered as soon as it is there.
func TestABriefGapIsNotReported(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		v := newVolume(t, filepath.Join(t.TempDir(), "config"), config(0))
		path := v.path("config.yaml")
		_, r, fs := watchedFake(t, path, WithQuietWindow(testQuiet))
		n := fs.last()
		data := filepath.Join(filepath.Dir(path), "..data")

		target, err := os.Readlink(data)
		require.NoError(t, err)
		require.NoError(t, os.Remove(data))
		send(n, data, decide.OpRemove)
		advance(testQuiet - time.Nanosecond)
		assert.Empty(t, r.calls(), "a gap shorter than the window is not reported")

		require.NoError(t, os.WriteFile(filepath.Join(filepath.Dir(path), target, "config.yaml"), []byte("new\n"), 0o644))
		require.NoError(t, os.Symlink(target, data))
		send(n, data, decide.OpCreate)
		synctest.Wait()
		assert.Equal(t, []string{"new\n"}, r.contents(), "delivered without waiting for the window")
		advance(time.Hour)
		assert.Empty(t, r.errs())
	})
}

func TestAMissingFileIsReportedOnceItHasStayedMissingForAWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "config.yaml")
		write(t, path, "v1\n")
		_, r, fs := watchedFake(t, path, WithQuietWindow(testQuiet))
		n := fs.last()

		require.NoError(t, os.Remove(path))
		send(n, path, decide.OpRemove)
		advance(testQuiet / 2)
		send(n, path+".swp", decide.OpCreate) // unrelated events do not postpone it
		send(n, path, decide.OpAttrib)        // nor do related ones
		advance(testQuiet/2 - time.Nanosecond)
		assert.Empty(t, r.calls())
		advance(time.Nanosecond)
		require.Len(t, r.errs(), 1)
		assert.ErrorIs(t, r.errs()[0], os.ErrNotExist)
	})
}

// Where the kernel reports writers' closes, an in-place write is read at
// the writer's close, at once, whatever the quiet window. A writer that
// keeps the file open is read once it has gone decide.HeldOpenWindow without a
// write, and again if its close changed anything; an empty file it holds
// open is not accepted before its close, or decide.MaxWriterWait.
func TestInPlaceWritesAreReadWhenTheWriterCloses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "config.yaml")
		write(t, path, "v1\n")
		fs := &fakes{caps: decide.Caps{Closes: true}}
		_, r := watched(t, path, withNotifier(fs.new), withoutWriterProbe(), WithRecheckInterval(0), WithQuietWindow(testQuiet))
		synctest.Wait()
		n := fs.last()

		write(t, path, "") // truncated, and the writer still at it
		send(n, path, decide.OpWrite)
		advance(decide.MaxWriterWait - time.Nanosecond)
		assert.Empty(t, r.calls(), "an empty file is not accepted while its writer has it open")
		write(t, path, "v2\n")
		send(n, path, decide.OpWrite)
		send(n, path, decide.OpClose)
		synctest.Wait()
		assert.Equal(t, []string{"v2\n"}, r.contents(), "read at the close, without waiting")

		// A writer that keeps the file open is read once it went quiet.
		write(t, path, "v3\n")
		send(n, path, decide.OpWrite)
		advance(decide.HeldOpenWindow - time.Nanosecond)
		assert.Len(t, r.contents(), 1)
		advance(time.Nanosecond)
		assert.Equal(t, []string{"v2\n", "v3\n"}, r.contents())

		// Its close, when it comes, reads again; nothing new, nothing fired.
		send(n, path, decide.OpClose)
		synctest.Wait()
		assert.Len(t, r.calls(), 2)

		// An empty file held open for decide.MaxWriterWait is what the file is.
		write(t, path, "")
		send(n, path, decide.OpWrite)
		advance(decide.MaxWriterWait - time.Nanosecond)
		assert.Len(t, r.calls(), 2)
		advance(time.Nanosecond)
		assert.Equal(t, []string{"v2\n", "v3\n", ""}, r.contents())

		// Emptied on purpose: the close says the writer is done, not
		// that no other follows it (truncate, then append): the empty
		// file is delivered once no writer has appeared for
		// decide.HeldOpenWindow.
		write(t, path, "v4\n")
		send(n, path, decide.OpWrite)
		send(n, path, decide.OpClose)
		synctest.Wait()
		write(t, path, "")
		send(n, path, decide.OpWrite)
		send(n, path, decide.OpClose)
		advance(decide.HeldOpenWindow - time.Nanosecond)
		assert.Equal(t, []string{"v2\n", "v3\n", "", "v4\n"}, r.contents())
		advance(time.Nanosecond)
		assert.Equal(t, []string{"v2\n", "v3\n", "", "v4\n", ""}, r.contents())
	})
}

// A change found by the re-check, with no event, waits the quiet window
// even where closes are reported: no close will come for it.
func TestARecheckedChangeWaitsTheQuietWindowEvenWhereClosesAreSeen(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "config.yaml")
		write(t, path, "v1\n")
		fs := &fakes{caps: decide.Caps{Closes: true}}
		_, r := watched(t, path, withNotifier(fs.new), withoutWriterProbe(), WithRecheckInterval(time.Second), WithQuietWindow(testQuiet))
		synctest.Wait()

		replace(t, path, "v2\n") // as on NFS: no event
		advance(time.Second + testQuiet)
		assert.Equal(t, []string{"v2\n"}, r.contents())
	})
}

// A close or a metadata change is read only if the file's stat changed: a
// chmod, a touch with the same time, the close of a reader, change nothing.
func TestACloseOrAttributeChangeReadsOnlyWhenTheStatChanged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "config.yaml")
		write(t, path, "v1\n")
		fs := &fakes{caps: decide.Caps{Closes: true, Files: true}}
		_, r := watched(t, path, withNotifier(fs.new), withoutWriterProbe(), WithRecheckInterval(0), WithQuietWindow(testQuiet))
		synctest.Wait()
		n := fs.last()

		sneak(t, path, "v2\n") // same inode, size and time
		send(n, path, decide.OpClose)
		send(n, path, decide.OpAttrib)
		synctest.Wait()
		assert.Empty(t, r.calls())

		// A rename over the file that the directory's events are slow to
		// tell: the old inode's link count dropping is read a quiet window
		// later, in case the new file is still being written.
		replace(t, path, "v3\n")
		send(n, path, decide.OpAttrib)
		synctest.Wait()
		assert.Empty(t, r.calls())
		advance(testQuiet)
		assert.Equal(t, []string{"v3\n"}, r.contents())

		// Where the directory cannot be watched, that is all there will
		// be: it is read at once.
		fs.set(func(fs *fakes) {
			fs.addErr = func(p string) error {
				if p == filepath.Dir(path) {
					return syscall.EACCES
				}
				return nil
			}
		})
		send(n, path, decide.OpRescan) // watch everything again: the directory is refused
		synctest.Wait()
		replace(t, path, "v4\n")
		send(fs.last(), path, decide.OpAttrib)
		synctest.Wait()
		assert.Equal(t, []string{"v3\n", "v4\n"}, r.contents())
	})
}

// Where the notifier can afford it, every directory the path goes through
// is watched, and the file itself; a watch refused on the file's
// directory is done without while the file's own watch stands in.
func TestEveryDirectoryOnTheWayAndTheFileAreWatched(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		root := t.TempDir()
		dir := filepath.Join(root, "a", "b")
		require.NoError(t, os.MkdirAll(dir, 0o755))
		path := filepath.Join(dir, "config.yaml")
		write(t, path, "v1\n")
		fs := &fakes{caps: decide.Caps{Ancestors: true, Files: true}}
		fs.addErr = func(p string) error {
			if p == dir {
				return syscall.EACCES
			}
			return nil
		}
		f, r := watched(t, path, withNotifier(fs.new), withoutWriterProbe(), WithRecheckInterval(0))
		synctest.Wait()
		want := append(ancestors(filepath.Join(root, "a")), path)
		assert.Equal(t, want, fs.last().watched())
		assert.Equal(t, ModeEvents, f.Stats().Mode)
		assert.Empty(t, r.errs())

		// Without the file's own watch either, nothing would tell of a
		// change: then it polls.
		fs.set(func(fs *fakes) {
			fs.addErr = func(p string) error {
				if p == dir || p == path {
					return syscall.EACCES
				}
				return nil
			}
		})
		send(fs.last(), path, decide.OpRemove)
		synctest.Wait()
		assert.Equal(t, ModePolling, f.Stats().Mode)
	})
}

// A file created empty and closed so: the close says that writer is done,
// not that the file is meant empty, for the next writer may still append
// to it. The doubt goes on until no writer has appeared for
// decide.HeldOpenWindow, and the empty file is delivered then.
func TestAWritersCloseDoesNotEndTheDoubtOfAnEmptyFile(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "config.yaml")
		write(t, path, "v1\n")
		fs := &fakes{caps: decide.Caps{Closes: true}}
		_, r := watched(t, path, withNotifier(fs.new), withoutWriterProbe(), WithRecheckInterval(0), WithQuietWindow(testQuiet))
		synctest.Wait()
		n := fs.last()
		replace(t, path, "") // created empty
		send(n, path, decide.OpCreate)
		send(n, path, decide.OpClose) // and its writer closed it
		advance(decide.HeldOpenWindow - time.Nanosecond)
		assert.Empty(t, r.calls(), "no writer's close alone ends the doubt of an empty file")
		advance(time.Nanosecond)
		assert.Equal(t, []string{""}, r.contents())
	})
}

// A re-check that sees a writer's truncation before the
// writer's event arrives starts a quiet-window wait; the event must turn
// it into a wait for the close, or a writer that pauses is read half done.
func TestARecheckedTruncationStillWaitsForTheWritersClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "config.yaml")
		write(t, path, "v1\n")
		fs := &fakes{caps: decide.Caps{Closes: true}}
		_, r := watched(t, path, withNotifier(fs.new), withoutWriterProbe(), WithRecheckInterval(time.Second), WithQuietWindow(testQuiet))
		synctest.Wait()
		n := fs.last()
		write(t, path, "") // truncated; the re-check comes before the event
		advance(time.Until(time.Now().Truncate(time.Second).Add(time.Second)))
		send(n, path, decide.OpWrite)
		advance(3 * testQuiet) // the writer thinks
		assert.Empty(t, r.contents(), "read while the writer has the file open")
		write(t, path, "v2\n")
		send(n, path, decide.OpWrite)
		send(n, path, decide.OpClose)
		synctest.Wait()
		assert.Equal(t, []string{"v2\n"}, r.contents())
	})
}

// Found by the set benchmark: a re-check that falls in the middle of an
// update sees the stat changed and, with no event to say how, waits a quiet
// window. The swap's event, when it comes, says how: it is read at once,
// not a window later. A write event, though, keeps the wait.
func TestARecheckedChangeIsReadAtOnceWhenItsEventShowsASwap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path, r, n := watchedConfig(t, WithRecheckInterval(time.Second))

		replace(t, path, "v2\n") // the re-check comes before the event
		advance(time.Until(time.Now().Truncate(time.Second).Add(time.Second)))
		assert.Empty(t, r.contents(), "a changed stat alone waits a window")
		send(n, path, decide.OpCreate)
		synctest.Wait()
		assert.Equal(t, []string{"v2\n"}, r.contents(), "the rename's event read it at once")

		write(t, path, "v") // in place, and the re-check comes first again
		advance(time.Until(time.Now().Truncate(time.Second).Add(time.Second)))
		send(n, path, decide.OpWrite)
		send(n, path, decide.OpCreate) // an unrelated create of the name cannot cut a writer short
		synctest.Wait()
		assert.Equal(t, []string{"v2\n"}, r.contents(), "read while the writer has the file open")
		write(t, path, "v3\n")
		send(n, path, decide.OpClose)
		synctest.Wait()
		assert.Equal(t, []string{"v2\n", "v3\n"}, r.contents())
	})
}

// A file removed and created again in place by a writer that keeps writing
// (rm config.yaml; producer > config.yaml) is read at the writer's close,
// never half-written, whether or not a re-check came first. A pause longer
// than the window with the file held open is read as the file stands then,
// and again at the close.
func TestAFileCreatedInPlaceIsReadAtItsWritersClose(t *testing.T) {
	for _, recheck := range []bool{false, true} {
		t.Run(fmt.Sprintf("recheck first %v", recheck), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				path, r, n := watchedConfig(t, WithRecheckInterval(time.Second))

				require.NoError(t, os.Remove(path))
				w, err := os.Create(path)
				require.NoError(t, err)
				_, err = w.WriteString("a: 1\n")
				require.NoError(t, err)
				if recheck {
					advance(time.Until(time.Now().Truncate(time.Second).Add(time.Second)))
				}
				send(n, path, decide.OpRemove)
				send(n, path, decide.OpCreate|decide.OpMade)
				send(n, path, decide.OpWrite)
				for _, line := range []string{"b: 2\n", "c: 3\n", "d: 4\n"} {
					advance(decide.HeldOpenWindow / 2) // the writer thinks, briefly
					_, err = w.WriteString(line)
					require.NoError(t, err)
					send(n, path, decide.OpWrite)
				}
				assert.Empty(t, r.contents(), "read while the writer was writing")
				require.NoError(t, w.Close())
				send(n, path, decide.OpClose)
				synctest.Wait()
				assert.Equal(t, []string{"a: 1\nb: 2\nc: 3\nd: 4\n"}, r.contents())

				// A longer pause with the file held open.
				w, err = os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
				require.NoError(t, err)
				_, err = w.WriteString("e: 5\n")
				require.NoError(t, err)
				send(n, path, decide.OpWrite)
				advance(decide.HeldOpenWindow)
				_, err = w.WriteString("f: 6\n")
				require.NoError(t, err)
				require.NoError(t, w.Close())
				send(n, path, decide.OpWrite)
				send(n, path, decide.OpClose)
				synctest.Wait()
				assert.Equal(t, []string{"a: 1\nb: 2\nc: 3\nd: 4\n", "e: 5\n", "e: 5\nf: 6\n"}, r.contents())
			})
		})
	}
}

// A hard link made where the path leads is created there, yet brings a
// file complete, as a rename does: it is read at once.
func TestAFileLinkedInPlaceIsReadAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path, r, n := watchedConfig(t)
		dir := filepath.Dir(path)

		write(t, filepath.Join(dir, "staged"), "v2\n")
		require.NoError(t, os.Remove(path))
		require.NoError(t, os.Link(filepath.Join(dir, "staged"), path))
		send(n, path, decide.OpAttrib)
		send(n, path, decide.OpRemove)
		send(n, path, decide.OpCreate|decide.OpMade)
		synctest.Wait()
		assert.Equal(t, []string{"v2\n"}, r.contents())
	})
}

// The shell creates the file before the producer starts
// (rm config.yaml; slow-producer > config.yaml), and the producer may take
// longer than a window to write its first byte. The empty file is never
// delivered: a file created with nothing in it is read at its creator's
// close.
func TestANewFileWhoseWriterPausesBeforeItsFirstWriteIsReadAtTheClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path, r, n := watchedConfig(t)

		require.NoError(t, os.Remove(path))
		send(n, path, decide.OpAttrib)
		send(n, path, decide.OpRemove) // the directory's IN_DELETE
		send(n, path, decide.OpRemove) // IN_DELETE_SELF
		w, err := os.Create(path)
		require.NoError(t, err)
		send(n, path, decide.OpCreate|decide.OpMade)
		advance(3 * testQuiet) // the producer starts up
		assert.Empty(t, r.calls(), "neither the empty file nor a missing one")
		_, err = w.WriteString("a: 1\n")
		require.NoError(t, err)
		send(n, path, decide.OpWrite)
		require.NoError(t, w.Close())
		send(n, path, decide.OpClose)
		synctest.Wait()
		assert.Equal(t, []string{"a: 1\n"}, r.contents())
	})
}

// The removal of the file a rename-over replaced (its
// IN_DELETE_SELF comes after the rename's event) says nothing about the
// path, and must not start a doubt: a doubt already running is not
// restarted, so a real removal soon after would be reported missing before
// a whole window had passed.
func TestARenameOversOldFileDoesNotShortenTheNextRemovalsWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path, r, n := watchedConfig(t)

		replace(t, path, "v2\n")
		send(n, path, decide.OpCreate) // IN_MOVED_TO on the directory
		send(n, path, decide.OpAttrib) // the old file's link count
		send(n, path, decide.OpRemove) // its IN_DELETE_SELF
		send(n, path, decide.OpRemove) // its IN_IGNORED, told as a removal by the hub
		synctest.Wait()
		require.Equal(t, []string{"v2\n"}, r.contents())

		advance(testQuiet * 7 / 10)
		swapThroughAGap(t, n, path, "v3\n")
		assert.Empty(t, r.errs(), "the file was missing for less than a window")
		assert.Equal(t, []string{"v2\n", "v3\n"}, r.contents())
	})
}

// The same for a touch (IN_ATTRIB, its time changed): the
// file is still there, and is looked at at once.
func TestATouchDoesNotShortenTheNextRemovalsWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path, r, n := watchedConfig(t)
		now := time.Now().Add(time.Second)
		require.NoError(t, os.Chtimes(path, now, now))
		send(n, path, decide.OpAttrib)
		advance(testQuiet * 7 / 10)
		swapThroughAGap(t, n, path, "v3\n")
		assert.Empty(t, r.errs(), "the file was missing for less than a window")
		assert.Equal(t, []string{"v3\n"}, r.contents())
	})
}

// watchedOnLinux watches path through fakes that report what the Linux
// backend does (writers' closes, creations told from renames, the file's
// own watch), with the re-check off unless opts turn it on, and returns the
// notifier to send its events through.
func watchedOnLinux(t *testing.T, path string, opts ...Option) (*recorder, *fakeNotifier) {
	t.Helper()
	return watchedThrough(t, path, &fakes{caps: linuxCaps}, opts...)
}

// watchedConfig writes "v1\n" to config.yaml in a directory of its own and
// watches it as watchedOnLinux does: the set-up of most of the loop's tests.
func watchedConfig(t *testing.T, opts ...Option) (string, *recorder, *fakeNotifier) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	write(t, path, "v1\n")
	r, n := watchedOnLinux(t, path, opts...)
	return path, r, n
}

// linuxCaps is what the Linux backend can see.
var linuxCaps = decide.Caps{Closes: true, Files: true, Ancestors: true}

// watchedThrough watches path through fs, with the re-check off unless
// opts turn it on and a quiet window of testQuiet, and returns the notifier
// to send its events through.
func watchedThrough(t *testing.T, path string, fs *fakes, opts ...Option) (*recorder, *fakeNotifier) {
	t.Helper()
	base := []Option{withNotifier(fs.new), withoutWriterProbe(), WithRecheckInterval(0), WithQuietWindow(testQuiet)}
	_, r := watched(t, path, append(base, opts...)...)
	synctest.Wait()
	return r, fs.last()
}

// swapThroughAGap moves the file away and, half a window later, moves
// another in with content (mv config.yaml config.old; mv config.new
// config.yaml), telling n of each as the kernel would.
func swapThroughAGap(t *testing.T, n *fakeNotifier, path, content string) {
	t.Helper()
	require.NoError(t, os.Rename(path, path+".old"))
	send(n, path, decide.OpRemove) // IN_MOVED_FROM on the directory
	advance(testQuiet / 2)         // less than a window after the removal
	write(t, path+".new", content)
	require.NoError(t, os.Rename(path+".new", path))
	send(n, path, decide.OpCreate) // IN_MOVED_TO
	synctest.Wait()
}

// A slow callback lets the subscription's buffer fill,
// and the writer's close is lost with the other events. The rescan that
// follows must not wait for a close that will not come.
func TestALostCloseIsNotWaitedFor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "config.yaml")
		write(t, path, "v1\n")
		raw := &fakeBackends{caps: decide.Caps{Closes: true}}
		h := events.NewHub(raw.newBackend)
		_, r := watched(t, path, withNotifier(h.Subscribe), WithRecheckInterval(0), WithQuietWindow(testQuiet))
		synctest.Wait()
		write(t, path, "v2\n")
		for range 2 * events.SubscriptionBuffer { // more than the buffer holds, then the close
			raw.last().send(path, decide.OpWrite)
		}
		raw.last().send(path, decide.OpClose)
		advance(testQuiet)
		assert.Equal(t, []string{"v2\n"}, r.contents(), "read a quiet window after the events were lost")
	})
}

// Recheck looks now, judged by content: a change no event reported is
// delivered; with nothing changed, nothing is; calls coalesce and start no
// goroutine.
func TestRecheckLooksNow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "config.yaml")
		write(t, path, "v1\n")
		f, r, _ := watchedFake(t, path, WithRecheckInterval(0), WithQuietWindow(testQuiet))

		goroutines := runtime.NumGoroutine()
		for range 10 {
			f.Recheck()
		}
		synctest.Wait()
		assert.Empty(t, r.calls(), "nothing changed: nothing delivered")
		assert.LessOrEqual(t, runtime.NumGoroutine(), goroutines, "Recheck starts no goroutine") // others' may end meanwhile

		replace(t, path, "v2\n") // as on NFS: no event
		f.Recheck()
		f.Recheck()
		time.Sleep(testQuiet) // the stat changed: a writer may be at it
		synctest.Wait()
		assert.Equal(t, []string{"v2\n"}, r.contents(), "delivered once")
		assert.Equal(t, ReasonRequest, f.Stats().LastUpdateReason)
	})
}

// Asked to look in the middle of an in-place write that no event reports
// (a poll, a remote writer), the watch gives the writer its quiet window,
// as the periodic re-check does, and never reads the file half-written.
func TestRecheckDuringAnUnreportedWriteWaitsForQuiet(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "config.yaml")
		write(t, path, "v1\n")
		f, r := watched(t, path, WithPolling(time.Hour), WithQuietWindow(testQuiet))
		synctest.Wait()

		full := strings.Repeat("key: value\n", 100)
		w, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
		require.NoError(t, err)
		_, err = w.WriteString(full[:len(full)/2])
		require.NoError(t, err)
		f.Recheck()
		synctest.Wait()
		time.Sleep(testQuiet / 2)
		_, err = w.WriteString(full[len(full)/2:])
		require.NoError(t, err)
		require.NoError(t, w.Close())
		time.Sleep(testQuiet)
		synctest.Wait()
		assert.Equal(t, []string{full}, r.contents(), "the whole file, once")
	})
}

// A request goes to the watch running when it is made. Made with no watch
// running, it is not left for the next one; made after Unwatch and Watch, it
// is the new watch's, which the stopping one cannot take from it.
func TestARecheckIsForTheWatchRunningThen(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "config.yaml")
		write(t, path, "v1\n")
		var adds atomic.Int32
		fs := &fakes{addErr: func(string) error { adds.Add(1); return nil }}
		f := Provider(path, withNotifier(fs.new), withoutWriterProbe(), WithRecheckInterval(0), WithLogger(testLogger(t)))
		f.Recheck()
		r := newRecorder(f)
		require.NoError(t, f.Watch(r.cb))
		t.Cleanup(func() { shutdown(t, f) })
		watching := adds.Load() // Watch watched the chain before it returned
		synctest.Wait()
		assert.Equal(t, watching, adds.Load(), "a request made before Watch made the new watch look")

		for range 20 {
			require.NoError(t, f.Unwatch())
			require.NoError(t, f.Watch(r.cb))
			f.Recheck()
		}
		replace(t, path, "v2\n") // no event
		f.Recheck()
		time.Sleep(defaultQuietWindow)
		synctest.Wait()
		assert.Equal(t, []string{"v2\n"}, r.contents())
	})
}

// A request to look cuts a backoff short: the watch is re-armed now, and
// reads.
func TestRecheckCutsABackoffShort(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "config.yaml")
		write(t, path, "v1\n")
		f, r, fs := watchedFake(t, path, withBackoff(time.Hour, time.Hour))
		fs.last().fail(syscall.EIO)
		synctest.Wait()
		require.Equal(t, ModeRetrying, f.Stats().Mode)
		calls, start := fs.calls(), time.Now()

		replace(t, path, "v2\n")
		f.Recheck()
		synctest.Wait()
		assert.Equal(t, calls+1, fs.calls(), "re-armed")
		assert.Equal(t, ModeEvents, f.Stats().Mode)
		assert.Equal(t, []string{"v2\n"}, r.contents())
		assert.Zero(t, time.Since(start), "without waiting out the backoff")
	})
}

// A set looks now too, and reads all its files as one.
func TestASetRechecksNow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		write(t, filepath.Join(dir, "a.yaml"), "a: 1\n")
		write(t, filepath.Join(dir, "b.yaml"), "b: 1\n")
		fs := &fakes{}
		s := Set(dir, []string{"a.yaml", "b.yaml"}, yamlParser{}, withNotifier(fs.new), withoutWriterProbe(), WithRecheckInterval(0),
			WithLogger(testLogger(t)))
		r := watchedSet(t, s)
		synctest.Wait()

		replace(t, filepath.Join(dir, "a.yaml"), "a: 2\n") // no events
		replace(t, filepath.Join(dir, "b.yaml"), "b: 2\n")
		s.Recheck()
		time.Sleep(defaultQuietWindow)
		synctest.Wait()
		m, _, n := r.last()
		assert.Equal(t, 1, n, "one callback for the set")
		assert.Equal(t, map[string]any{"a": 2, "b": 2}, m)
		assert.Equal(t, ReasonRequest, s.Stats().LastUpdateReason)
	})
}

// Without a watch, Recheck does nothing, and never blocks.
func TestRecheckWithoutAWatchDoesNothing(t *testing.T) {
	f := Provider(filepath.Join(t.TempDir(), "config.yaml"))
	for range 3 {
		f.Recheck()
	}
	assert.Equal(t, ModeStopped, f.Stats().Mode)
}

// Two writers in a row: by the time the first one's close is read, the
// second has truncated the file and begun to write. The read the close asks
// for finds the second writer's work half done; the events the kernel
// queued before that read (here handed on by Sync, as the kernel's are)
// say a writer began after the close, so the read is not accepted, and the
// second writer's close is what reads. The same bytes written twice fire
// nothing; different bytes fire only for content a writer finished.
func TestACloseIsBelievedOnlyIfNoLaterWriterBegan(t *testing.T) {
	for _, c := range []struct {
		name, first, second string
		want                []string
	}{
		{"the same bytes", "v1\n", "v1\n", nil},
		{"other bytes", "v2\n", "v3: a longer content\n", []string{"v3: a longer content\n"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "config.yaml")
				write(t, path, "v1\n")
				fs := &fakes{caps: linuxCaps, buffered: true}
				r, n := watchedThrough(t, path, fs)

				// The first writer writes and closes; the second truncates
				// and writes half before the first close is read.
				write(t, path, c.first)
				send(n, path, decide.OpWrite)
				synctest.Wait()
				write(t, path, c.second[:len(c.second)/2])
				fs.set(func(fs *fakes) {
					fs.onSync = func(n *fakeNotifier) {
						fs.onSync = nil
						send(n, path, decide.OpWrite) // the second writer's truncation and write
					}
				})
				send(n, path, decide.OpClose)
				synctest.Wait()
				assert.Empty(t, r.contents(), "read the second writer's work half done at the first one's close")

				write(t, path, c.second)
				send(n, path, decide.OpWrite)
				send(n, path, decide.OpClose)
				synctest.Wait()
				assert.Equal(t, c.want, r.contents())
			})
		})
	}
}

// flakySubject is a subject whose reads fail with err while fails is above
// zero, each read taking one off.
type flakySubject struct {
	subject
	mu    sync.Mutex
	fails int
	err   error
}

func (f *flakySubject) read(why decide.Reason, via *resolution, probe, first bool) reading {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fails > 0 {
		f.fails--
		return reading{why: why, err: f.err}
	}
	return f.subject.read(why, via, probe, first)
}

// A read that fails for a reason of the process (too many open files), not
// of the file, is retried with the backoff until it reads, with no event
// and no re-check to ask for it. It is reported once, as what it is, and it
// is no comeback of the file: the file is delivered only if it is new.
func TestAReadThatFailsForTheProcessIsRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "config.yaml")
		write(t, path, "v1\n")
		fs := &fakes{caps: decide.Caps{Closes: true}}
		f := Provider(path, withNotifier(fs.new), withoutWriterProbe(), WithRecheckInterval(0), WithQuietWindow(testQuiet),
			withBackoff(testBackoffMin, testBackoffMax), WithErrorCallbacks(), WithLogger(testLogger(t)))
		emfile := &os.PathError{Op: "open", Path: path, Err: syscall.EMFILE}
		flaky := &flakySubject{subject: f.t.subj, err: emfile}
		f.t.subj = flaky
		r := newRecorder(f)
		require.NoError(t, f.Watch(r.cb))
		defer shutdown(t, f)
		synctest.Wait()
		n := fs.last()

		replace(t, path, "v2\n")
		flaky.mu.Lock()
		flaky.fails = 5
		flaky.mu.Unlock()
		send(n, path, decide.OpCreate)
		advance(30 * testBackoffMax)
		assert.Equal(t, []string{"v2\n"}, r.contents(), "delivered once it reads")
		require.Len(t, r.errs(), 1, "reported once")
		assert.ErrorIs(t, r.errs()[0], syscall.EMFILE)
		assert.NotErrorIs(t, r.errs()[0], os.ErrNotExist)

		// Fails again, then reads the same content: nothing to deliver.
		flaky.mu.Lock()
		flaky.fails = 2
		flaky.mu.Unlock()
		send(n, path, decide.OpCreate)
		advance(30 * testBackoffMax)
		assert.Equal(t, []string{"v2\n"}, r.contents())
		assert.Len(t, r.errs(), 2, "a new failure, after reads worked again, is reported again")
		assert.Equal(t, ModeEvents, f.Stats().Mode)
	})
}

// Events at the head of a lot that need no facts go to the decider alone,
// with none: a file renamed over the path is read before the stat its old
// file's events ask for, not after it, on the way to the callback.
func TestEventsThatNeedNoFactsGoFirstWithNone(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.yaml")
	write(t, path, "v1\n")
	o := newOptions([]Option{withNotifier((&fakes{}).new), withoutWriterProbe()})
	l, err := openLoop(target{path: path, subj: &fileSubject{path: path, abs: path}, opts: &o}, quietSink{})
	require.NoError(t, err)
	defer l.close()

	renamed := decide.Event{Name: path, Op: decide.OpCreate}                                          // moved in
	attrib := decide.Event{Name: path, Op: decide.OpAttrib}                                           // the old file's last link gone
	old := decide.Event{Name: filepath.Join(dir, "..2025_12_31", "config.yaml"), Op: decide.OpRemove} // nothing the path depends on
	for _, c := range []struct {
		name  string
		evs   []decide.Event
		taken int
		stats bool
	}{
		{"renamed over, then its old file's events: the rename alone", []decide.Event{renamed, attrib, attrib}, 1, false},
		{"an old payload's removals, then a rename: both alone", []decide.Event{old, old, renamed, attrib}, 3, false},
		{"the old file's event first: all, with the stats", []decide.Event{attrib, renamed}, 2, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			evs, f := l.facts.gatherFirst(c.evs, l.d)
			assert.Equal(t, c.evs[:c.taken], evs)
			assert.Equal(t, c.stats, len(f.Paths) > 0)
		})
	}
}

// quietSink takes what a loop finds, and does nothing with it.
type quietSink struct{}

func (quietSink) found(reading)           {}
func (quietSink) readFailed(error)        {}
func (quietSink) watching(Mode, []string) {}
func (quietSink) unchanged()              {}
func (quietSink) selfChanged()            {}
func (quietSink) waitsOn(*events.Bell)    {}

// An event that asks for both the lstat of the file and the stat of the
// path (an in-place write's) takes one system call where the path is the
// file itself, and two where it is a symlink.
func TestAWritesFactsStatTheFileOnce(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "config.yaml")
	link := filepath.Join(dir, "current.yaml")
	write(t, file, "v1\n")
	require.NoError(t, os.Symlink("config.yaml", link))
	o := newOptions([]Option{withNotifier((&fakes{}).new), withoutWriterProbe()})
	for _, c := range []struct {
		name string
		path string
		same bool
	}{
		{"the file itself: its lstat is its stat", file, true},
		{"a symlink: its lstat is the link's, the stat the file's", link, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			l, err := openLoop(target{path: c.path, subj: &fileSubject{path: c.path, abs: c.path}, opts: &o}, quietSink{})
			require.NoError(t, err)
			defer l.close()
			f := l.facts.gather([]decide.Event{{Name: c.path, Op: decide.OpWrite}}, l.d)
			require.Len(t, f.Entries, 1)
			require.Len(t, f.Paths, 1)
			assert.Equal(t, c.same, f.Entries[0].Info == f.Paths[0], "one FileInfo for both")
			assert.True(t, f.Paths[0].Mode().IsRegular(), "the path's stat is the file's")
		})
	}
}
