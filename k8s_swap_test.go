package file

import (
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// volume is a ConfigMap, Secret or projected volume as kubelet lays it out:
//
//	<dir>/..2026_11_22_10_00_00.123456789/<key>   the payload
//	<dir>/..data -> ..2026_11_22_10_00_00.123456789
//	<dir>/<key> -> ..data/<key>
type volume struct {
	t   testing.TB
	dir string
}

const dataDir = "..data"

func newVolume(t testing.TB, dir string, payload map[string]string) *volume {
	t.Helper()
	require.NoError(t, os.MkdirAll(dir, 0o755))
	v := &volume{t: t, dir: dir}
	require.True(t, v.update(payload))
	return v
}

func (v *volume) path(key string) string { return filepath.Join(v.dir, key) }

// update writes payload the way kubelet's AtomicWriter does, and reports
// whether it wrote anything:
//  1. if the payload equals what is on disk, write nothing (no events);
//  2. write every file into a new ..<UTC timestamp>.<random> directory;
//  3. point a ..data_tmp symlink at it and rename it over ..data;
//  4. link <key> -> ..data/<key> for new keys, remove the links of dropped ones;
//  5. remove the old timestamped directory.
func (v *volume) update(payload map[string]string) bool {
	t := v.t
	t.Helper()
	old, oldTs := v.current()
	if oldTs != "" && maps.Equal(old, payload) {
		return false
	}
	ts := v.writePayload(payload)
	tmp := filepath.Join(v.dir, "..data_tmp")
	require.NoError(t, os.Symlink(filepath.Base(ts), tmp))
	require.NoError(t, os.Rename(tmp, filepath.Join(v.dir, dataDir)))
	v.relink(old, payload)
	if oldTs != "" {
		require.NoError(t, os.RemoveAll(filepath.Join(v.dir, oldTs)))
	}
	return true
}

// swapRemoveCreate updates the way the seed report saw it: ..data is
// removed, and only after a pause created again, pointing at the new payload.
func (v *volume) swapRemoveCreate(payload map[string]string, pause time.Duration) {
	t := v.t
	t.Helper()
	old, oldTs := v.current()
	ts := v.writePayload(payload)
	require.NoError(t, os.Remove(filepath.Join(v.dir, dataDir)))
	time.Sleep(pause)
	require.NoError(t, os.Symlink(filepath.Base(ts), filepath.Join(v.dir, dataDir)))
	v.relink(old, payload)
	require.NoError(t, os.RemoveAll(filepath.Join(v.dir, oldTs)))
}

// current returns the payload on disk and the name of its directory.
func (v *volume) current() (map[string]string, string) {
	ts, err := os.Readlink(filepath.Join(v.dir, dataDir))
	if err != nil {
		return nil, ""
	}
	entries, err := os.ReadDir(filepath.Join(v.dir, ts))
	require.NoError(v.t, err)
	payload := make(map[string]string)
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(v.dir, ts, e.Name()))
		require.NoError(v.t, err)
		payload[e.Name()] = string(b)
	}
	return payload, ts
}

func (v *volume) writePayload(payload map[string]string) string {
	t := v.t
	ts, err := os.MkdirTemp(v.dir, time.Now().UTC().Format("..2006_01_02_15_04_05."))
	require.NoError(t, err)
	require.NoError(t, os.Chmod(ts, 0o755))
	for key, data := range payload {
		p := filepath.Join(ts, key)
		require.NoError(t, os.WriteFile(p, []byte(data), 0o644))
		require.NoError(t, os.Chmod(p, 0o644))
	}
	return ts
}

func (v *volume) relink(old, payload map[string]string) {
	t := v.t
	for key := range payload {
		if _, err := os.Lstat(v.path(key)); err != nil {
			require.NoError(t, os.Symlink(filepath.Join(dataDir, key), v.path(key)))
		}
	}
	for key := range old {
		if _, ok := payload[key]; !ok {
			require.NoError(t, os.Remove(v.path(key)))
		}
	}
}

func config(n int) map[string]string {
	return map[string]string{"config.yaml": fmt.Sprintf("generation: %d\n", n)}
}

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
	_, rb := watched(t, v.path("b.yaml"), WithBackoff(time.Hour, time.Hour))
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
			advance(5*time.Second + DefaultQuietWindow)
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
	_, r := watched(t, v.path("config.yaml"), WithBackoff(time.Hour, time.Hour))

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
	_, r := watched(t, path, WithBackoff(time.Hour, time.Hour))

	for i := 1; i <= 3; i++ {
		require.NoError(t, os.RemoveAll(dir))
		r.waitErr(t, fs.ErrNotExist)
		newVolume(t, dir, config(i))
		r.waitContent(t, config(i)["config.yaml"])
	}
}
