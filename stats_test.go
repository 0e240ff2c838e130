package file

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/keepwatch/file/internal/decide"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func TestStatsFollowTheWatch(t *testing.T) {
	dir := realTempDir(t)
	path := filepath.Join(dir, "config.yaml")
	write(t, path, "v1\n")
	f := Provider(path, WithLogger(testLogger(t)), withBackoff(time.Hour, time.Hour), WithErrorCallbacks())

	st := f.Stats()
	assert.Equal(t, Stats{Path: path, Mode: ModeStopped}, st, "nothing read, nothing watched")

	_, err := f.ReadBytes()
	require.NoError(t, err)
	v1 := f.Stats()
	assert.Equal(t, int64(3), v1.Size, "the baseline is what the application has")
	assert.NotEmpty(t, v1.Fingerprint)
	assert.Empty(t, v1.SHA256, "no plain hash unless asked for")

	assert.Zero(t, v1.LastRead, "a read outside a watch is no watch's")

	started := time.Now()
	r := newRecorder(f)
	require.NoError(t, f.Watch(r.cb))
	t.Cleanup(func() { shutdown(t, f) })
	require.Eventually(t, func() bool { return !f.Stats().LastRead.IsZero() }, waitFor, tick, "the watch's first read counts")
	st = f.Stats()
	assert.False(t, st.LastRead.Before(started))
	assert.Zero(t, st.LastUpdate, "and is no update")
	assert.False(t, st.SubPath)
	assert.Equal(t, ModeEvents, st.Mode)
	assert.Equal(t, onTheWay(t, dir), st.WatchedDirs, "every directory on the way to the file")
	assert.Zero(t, st.Updates)

	before := time.Now()
	replace(t, path, "v2\n")
	r.waitContent(t, "v2\n")
	st = f.Stats()
	assert.Equal(t, uint64(1), st.Updates)
	assert.NotEqual(t, v1.Fingerprint, st.Fingerprint, "another content, another fingerprint")
	v2 := st.Fingerprint
	assert.Equal(t, ReasonEvent, st.LastUpdateReason)
	assert.False(t, st.LastUpdate.Before(before))
	assert.False(t, st.LastRead.Before(st.LastUpdate), "a delivery is a read")
	assert.Zero(t, st.Errors)
	read := st.LastRead

	require.NoError(t, os.Remove(path))
	r.waitErr(t, fs.ErrNotExist)
	st = f.Stats()
	assert.Equal(t, uint64(1), st.Errors)
	assert.ErrorIs(t, st.LastError, fs.ErrNotExist)
	assert.False(t, st.LastErrorTime.Before(st.LastUpdate))
	assert.Equal(t, v2, st.Fingerprint, "the application still runs v2")
	assert.Equal(t, read, st.LastRead, "a missing file is no read")
	assert.Equal(t, ModeEvents, st.Mode, "a missing file is not a broken watch")

	require.NoError(t, f.Unwatch())
	st = f.Stats()
	assert.Equal(t, ModeStopped, st.Mode)
	assert.Empty(t, st.WatchedDirs)
	assert.Equal(t, uint64(1), st.Updates, "counters outlive the watch")
}

func TestStatsWatchedDirsFollowTheChain(t *testing.T) {
	vol := filepath.Join(realTempDir(t), "config")
	v := newVolume(t, vol, config(1))
	f, r := watched(t, v.path("config.yaml"))
	v.update(config(2))
	r.waitContent(t, config(2)["config.yaml"])
	data, err := os.Readlink(filepath.Join(vol, "..data"))
	require.NoError(t, err)
	want := append(onTheWay(t, vol), filepath.Join(vol, data))
	require.Eventually(t, func() bool { return slices.Equal(want, f.Stats().WatchedDirs) }, waitFor, tick,
		"the way to the volume, the volume and its current timestamped directory, not the old one: %v", f.Stats().WatchedDirs)
}

func TestStatsCountRestartsAndPolling(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "config.yaml")
		write(t, path, "v1\n")
		f, r, fs := watchedFake(t, path)

		fs.last().fail(fsnotify.ErrEventOverflow)
		synctest.Wait()
		st := f.Stats()
		assert.Equal(t, ModeRetrying, st.Mode)
		assert.Empty(t, st.WatchedDirs)
		assert.Equal(t, uint64(1), st.Restarts)
		assert.Equal(t, uint64(1), st.Errors)
		assert.ErrorIs(t, st.LastError, ErrWatchInterrupted)

		time.Sleep(testBackoffMax)
		synctest.Wait()
		assert.Equal(t, ModeEvents, f.Stats().Mode)
		assert.Equal(t, []string{filepath.Dir(path)}, f.Stats().WatchedDirs)

		// Events cannot be had: polling, one restart however often events
		// are tried again.
		fs.set(func(fs *fakes) { fs.addErr = func(string) error { return syscall.ENOSPC } })
		fs.last().fail(syscall.EIO)
		synctest.Wait()
		time.Sleep(testBackoffMax)
		synctest.Wait()
		restarts := f.Stats().Restarts
		assert.Equal(t, ModePolling, f.Stats().Mode)
		advance(3 * decide.EventRetryInterval)
		st = f.Stats()
		assert.Equal(t, ModePolling, st.Mode)
		assert.Empty(t, st.WatchedDirs)
		assert.Equal(t, restarts, st.Restarts)
		assert.Len(t, r.errs(), 3, "overflow, EIO, polling: %s", r)
	})
}

func TestStatsOfAForcedPoll(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	write(t, path, "v1\n")
	f, _ := watched(t, path, WithPolling(time.Minute))
	st := f.Stats()
	assert.Equal(t, ModePolling, st.Mode)
	assert.Empty(t, st.WatchedDirs)
	assert.Zero(t, st.Restarts)
}

func TestStatsMarshalJSON(t *testing.T) {
	st := Stats{Path: "/etc/app.yaml", Mode: ModeEvents, Updates: 2, LastError: fs.ErrNotExist}
	b, err := json.Marshal(st)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"Mode":"events"`)
	assert.Contains(t, string(b), `"Updates":2`)
	assert.Contains(t, string(b), `"LastError":"file does not exist"`)
	b, err = json.Marshal(Stats{})
	require.NoError(t, err)
	assert.Contains(t, string(b), `"LastError":""`)
}

// Nothing derived from a Secret's content that lets a reader test a guess
// leaves the process by default: not in the log, not in Stats. What is
// there tells versions apart (the kubelet generation, size, time, a keyed
// fingerprint) and says nothing of the content.
func TestASecretsContentHashLeavesTheProcessOnlyWhenAskedFor(t *testing.T) {
	const password = "hunter2\n"
	v := newVolume(t, filepath.Join(t.TempDir(), "db-credentials"), map[string]string{"password": "changeme\n"})
	var logged lockedBuffer // the watch logs its delivery after the callback returns
	logger := slog.New(slog.NewJSONHandler(&logged, &slog.HandlerOptions{Level: slog.LevelDebug}))
	f, r := watched(t, v.path("password"), WithLogger(logger))
	v.update(map[string]string{"password": password})
	r.waitContent(t, password)

	gen, err := os.Readlink(filepath.Join(filepath.Dir(v.path("password")), "..data"))
	require.NoError(t, err)
	// The delivery's log line comes once the callback has returned.
	require.Eventually(t, func() bool { return strings.Contains(logged.String(), `"generation":"`+gen+`"`) }, waitFor, tick,
		"the delivery is logged with its generation: %s", &logged)
	st := f.Stats()
	js, err := json.Marshal(st)
	require.NoError(t, err)
	t.Logf("log:\n%s\nStats: %s", logged.String(), js)
	sum := sha256.Sum256([]byte(password))
	for _, leak := range []string{hex.EncodeToString(sum[:]), hex.EncodeToString(sum[:6]), password[:7]} {
		assert.NotContains(t, logged.String(), leak)
		assert.NotContains(t, string(js), leak)
	}
	assert.Equal(t, gen, st.Generation)
	assert.Equal(t, int64(len(password)), st.Size)
	assert.False(t, st.ModTime.IsZero())
	assert.NotEmpty(t, st.Fingerprint)
	assert.Equal(t, st.Fingerprint, fingerprint(sum), "same content, same fingerprint, within the process")
	assert.NotEqual(t, hex.EncodeToString(sum[:]), st.Fingerprint)

	// Asked for, on a file that is no Secret.
	path := filepath.Join(t.TempDir(), "config.yaml")
	write(t, path, "a: 1\n")
	g, _ := watched(t, path, WithContentHash())
	assert.Equal(t, sha("a: 1\n"), g.Stats().SHA256)
}

// A re-check that finds the file unchanged reads nothing, yet tells that
// the watch is looking: LastCheck moves on, LastRead does not.
func TestARecheckThatFindsNothingIsACheckNotARead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "config.yaml")
		write(t, path, "v1\n")
		f, _, _ := watchedFake(t, path, WithRecheckInterval(time.Second))
		st := f.Stats()
		require.False(t, st.LastRead.IsZero())
		assert.Equal(t, st.LastRead, st.LastCheck, "the first read is the first check")

		advance(3 * time.Second)
		after := f.Stats()
		assert.Equal(t, st.LastRead, after.LastRead, "nothing read")
		assert.Greater(t, after.LastCheck.Sub(st.LastCheck), time.Second, "re-checked")
	})
}
