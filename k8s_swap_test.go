package file

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/keepwatch/file/internal/decide"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestConfigMapManyUpdates(t *testing.T) {
	v := newVolume(t, filepath.Join(t.TempDir(), "config"), config(0))
	_, r := watched(t, v.path("config.yaml"))

	// One at a time: each is delivered, and the watch survives every one.
	for i := 1; i <= 30; i++ {
		v.update(config(i))
		r.waitContent(t, config(i)["config.yaml"])
	}
	// Back to back: the last one is delivered.
	for i := 31; i <= 80; i++ {
		v.update(config(i))
	}
	r.waitContent(t, config(80)["config.yaml"])
	assertNoRepeats(t, r.contents())
	assert.Empty(t, r.errs())
}

func TestConfigMapUnchangedPayloadWritesAndFiresNothing(t *testing.T) {
	v := newVolume(t, filepath.Join(t.TempDir(), "config"), config(1))
	_, r := watched(t, v.path("config.yaml"))
	assert.False(t, v.update(config(1)))
	v.update(config(2))
	r.waitContent(t, config(2)["config.yaml"])
	assert.Len(t, r.calls(), 1)
}

func TestConfigMapKeyAddedAndRemoved(t *testing.T) {
	v := newVolume(t, filepath.Join(t.TempDir(), "config"), map[string]string{"a.yaml": "a: 1\n"})
	_, ra := watched(t, v.path("a.yaml"))
	_, rb := watched(t, v.path("b.yaml"), withBackoff(time.Hour, time.Hour), WithWaitForPath())
	rb.waitErr(t, fs.ErrNotExist)

	v.update(map[string]string{"a.yaml": "a: 1\n", "b.yaml": "b: 1\n"})
	c := rb.waitContent(t, "b: 1\n")
	assert.Equal(t, fsnotify.Create, c.op)

	v.update(map[string]string{"a.yaml": "a: 1\n"})
	rb.waitErr(t, fs.ErrNotExist)

	v.update(map[string]string{"a.yaml": "a: 1\n", "b.yaml": "b: 2\n"})
	rb.waitContent(t, "b: 2\n")

	// a.yaml never changed through all of it.
	v.update(map[string]string{"a.yaml": "a: 2\n"})
	ra.waitContent(t, "a: 2\n")
	assert.Equal(t, []string{"a: 2\n"}, ra.contents())
	assert.Empty(t, ra.errs())
}

// The seed report: ..data is removed and created again rather than renamed
// over; koanf's stock provider dies on the first one.
func TestConfigMapRemoveThenCreateSwapTwiceInARow(t *testing.T) {
	v := newVolume(t, filepath.Join(t.TempDir(), "config"), config(0))
	_, r := watched(t, v.path("config.yaml"))

	v.swapRemoveCreate(config(1), 20*time.Millisecond)
	r.waitContent(t, config(1)["config.yaml"])
	v.swapRemoveCreate(config(2), 20*time.Millisecond)
	r.waitContent(t, config(2)["config.yaml"])

	// Still alive, for both kinds of swap.
	v.update(config(3))
	r.waitContent(t, config(3)["config.yaml"])
	v.swapRemoveCreate(config(4), 0)
	r.waitContent(t, config(4)["config.yaml"])
}

// A projected ServiceAccount token, rotated by kubelet while the other keys
// of the volume stay the same.
func TestProjectedServiceAccountTokenRotation(t *testing.T) {
	token := func(n int) map[string]string {
		return map[string]string{
			"token":     fmt.Sprintf("eyJhbGciOiJSUzI1NiJ9.rotation-%d.sig", n),
			"ca.crt":    "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n",
			"namespace": "default",
		}
	}
	v := newVolume(t, filepath.Join(t.TempDir(), "serviceaccount"), token(0))
	_, rt := watched(t, v.path("token"))
	_, rn := watched(t, v.path("namespace"))
	for i := 1; i <= 5; i++ {
		v.update(token(i))
		rt.waitContent(t, token(i)["token"])
	}
	assert.Len(t, rt.contents(), 5)
	assert.Empty(t, rn.calls(), "the namespace did not change")
}

// The router report's trap: the key symlink's own (lstat) mtime never
// moves on an update, yet the update must be seen, by events and by the
// periodic re-check alone.
func TestConfigMapUpdateIsSeenThoughTheKeyLinkNeverChanges(t *testing.T) {
	t.Run("events", func(t *testing.T) {
		v := newVolume(t, filepath.Join(t.TempDir(), "config"), config(0))
		_, r := watched(t, v.path("config.yaml"))
		before := lstatMtime(t, v.path("config.yaml"))
		v.update(config(1))
		r.waitContent(t, config(1)["config.yaml"])
		assert.Equal(t, before, lstatMtime(t, v.path("config.yaml")))
	})
	t.Run("recheck", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			v := newVolume(t, filepath.Join(t.TempDir(), "config"), config(0))
			_, r, _ := watchedFake(t, v.path("config.yaml"), WithRecheckInterval(5*time.Second))
			before := lstatMtime(t, v.path("config.yaml"))
			v.update(config(1))
			advance(5*time.Second + defaultQuietWindow)
			assert.Equal(t, []string{config(1)["config.yaml"]}, r.contents())
			assert.Equal(t, before, lstatMtime(t, v.path("config.yaml")))
		})
	})
}

func lstatMtime(t *testing.T, path string) time.Time {
	t.Helper()
	info, err := os.Lstat(path)
	require.NoError(t, err)
	return info.ModTime()
}

func TestConfigMapFileDeletedThenRecreated(t *testing.T) {
	v := newVolume(t, filepath.Join(t.TempDir(), "config"), config(0))
	_, r := watched(t, v.path("config.yaml"), withBackoff(time.Hour, time.Hour))

	// Someone deletes the key link; a later update puts it back.
	require.NoError(t, os.Remove(v.path("config.yaml")))
	r.waitErr(t, fs.ErrNotExist)
	v.update(config(1))
	c := r.waitContent(t, config(1)["config.yaml"])
	assert.Equal(t, fsnotify.Create, c.op)
}

func TestConfigMapVolumeRemovedAndRecreated(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "config")
	path := newVolume(t, dir, config(0)).path("config.yaml")
	_, r := watched(t, path, withBackoff(time.Hour, time.Hour))

	for i := 1; i <= 3; i++ {
		require.NoError(t, os.RemoveAll(dir))
		r.waitErr(t, fs.ErrNotExist)
		newVolume(t, dir, config(i))
		r.waitContent(t, config(i)["config.yaml"])
	}
}

// A key of a kubelet volume made again by hand as a plain file, then
// emptied: the empty file is delivered within a window, not held ten
// seconds for its creator's close, which came before the file's own watch
// and went unheard (its directory, a kubelet volume's, does not report its
// entries' closes), or came before a read that found the file empty and
// no one writing it, ahead of the creation's event (1 make test in 26
// beside a CPU hog). TestACreationWhoseOwnWatchCameFirstIsNotHeldForItsClose
// and TestDecisions' "a file's creation taken after a read that found it
// empty" (internal/decide) hold the rules.
func TestAKeyMadeAgainByHandAndEmptiedIsNotHeldForItsCreatorsClose(t *testing.T) {
	for range 3 {
		v := newVolume(t, filepath.Join(t.TempDir(), "config"), config(1))
		f, r := watched(t, v.path("config.yaml"))
		v.update(config(2))
		r.waitContent(t, "generation: 2\n")
		require.NoError(t, os.Remove(v.path("config.yaml")))
		write(t, v.path("config.yaml"), "generation: 3\n")
		write(t, v.path("config.yaml"), "") // O_TRUNC, and nothing written
		start := time.Now()
		r.waitContent(t, "") // within waitFor (10 s): held for the close, it came at 10 s or later
		r.logDelay(t, "the key made again and emptied", start)
		f.Unwatch()
	}
}

// The same made certain, in the order that test's race takes once in many
// runs: the key is made again and emptied right as the watch, having found
// it missing, asks the volume's directory for its entries' closes. The
// creator's closes come before that watch, unheard; the read after it finds
// the file empty, the kernel saying no one writes it; and the creation's
// event, queued before, comes after that read. It was held for the
// creator's close until MaxWriterWait (10 s).
func TestAKeyMadeAgainAsItsDirectoryIsAskedForClosesIsNotHeld(t *testing.T) {
	needCaps(t, decide.Caps{Closes: true}, "writers' closes")
	v := newVolume(t, filepath.Join(t.TempDir(), "config"), config(1))
	key := v.path("config.yaml")
	var removed atomic.Bool
	remade := make(chan error, 1) // the hook runs on the loop's goroutine: no t.FailNow there
	makeAgain := onStep(func(_ decide.Input, d decide.Decision) {
		a := d.Next
		if removed.Load() && a.Kind == decide.AddWatch && a.Path == filepath.Dir(key) && a.Report&decide.WatchCloses != 0 {
			removed.Store(false)
			remade <- errors.Join(os.WriteFile(key, []byte("generation: 3\n"), 0o644), os.WriteFile(key, nil, 0o644))
		}
	})
	_, r := watched(t, key, makeAgain)
	v.update(config(2))
	r.waitContent(t, "generation: 2\n")
	removed.Store(true)
	require.NoError(t, os.Remove(key))
	select {
	case err := <-remade:
		require.NoError(t, err)
	case <-time.After(waitFor):
		require.FailNow(t, "the watch never asked the key's directory for its entries' closes")
	}
	start := time.Now()
	require.Eventually(t, func() bool {
		c, ok := r.last()
		return ok && c.err == nil && c.data == ""
	}, 5*time.Second, tick, "the empty key was not delivered within 5 s (it was held for a close that had come); calls: %s", r)
	r.logDelay(t, "the key made again as its directory was asked for closes", start)
}
