package live_test

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/keepwatch/file"
	"github.com/keepwatch/file/live"
	"github.com/knadh/koanf/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// probe asks h as kubelet's readiness probe does, and returns the status
// and the body.
func probe(t *testing.T, h http.Handler) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
	return rec.Code, rec.Body.String()
}

// startWaiting runs StartWait in a goroutine, and returns its result
// channel; the config is shut down when the test ends.
func startWaiting(t *testing.T, ctx context.Context, c interface {
	StartWait(context.Context) error
	Shutdown(context.Context) error
}) <-chan error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- c.StartWait(ctx) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitFor)
		defer cancel()
		require.NoError(t, c.Shutdown(ctx))
	})
	return done
}

// The files of a ConfigMap volume that is not mounted yet, then mounted
// with a config that fails Validate, then updated to a good one: StartWait
// waits through both, not ready and counting no rejection, and returns
// once the good one is published. A bad push after that leaves the config
// ready, reporting the push; the next good one clears the report.
func TestStartWaitWaitsForAGoodConfigAndStaysReadyThroughABadPush(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "app")
	path := filepath.Join(dir, "app.yaml")
	f := provider(t, path, file.WithWaitForPath())
	logs := &logRecords{}
	var reported errorLog
	c := &live.Config{Name: "app", Load: loadYAML(f), Watch: []live.Watcher{f}, Validate: positivePort,
		OnError: reported.add, Logger: logs.logger()}
	readyz := live.ReadyHandler(c)

	done := startWaiting(t, t.Context(), c)
	require.Eventually(t, func() bool { return c.Stats().LastError != nil }, waitFor, tick)
	st := c.Stats()
	assert.ErrorIs(t, st.LastError, fs.ErrNotExist)
	assert.ErrorIs(t, c.Ready(), live.ErrNotReady)
	assert.ErrorIs(t, c.Ready(), fs.ErrNotExist, "Ready tells why")
	code, body := probe(t, readyz)
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Regexp(t, `^waiting app: no good config yet; the last attempt failed at \S+ \(the error is in the log\)\n$`, body)

	v := newVolume(t, dir, map[string]string{"app.yaml": "port: -1\n"})
	require.Eventually(t, func() bool { return errors.Is(c.Stats().LastError, live.ErrRejected) }, waitFor, tick,
		"the mounted file is loaded, and rejected: %v", c.Stats().LastError)
	select {
	case err := <-done:
		t.Fatalf("StartWait returned %v on a rejected config", err)
	default:
	}
	v.update(map[string]string{"app.yaml": "port: 8080\n"})
	require.NoError(t, <-done)

	st = c.Stats()
	assert.Equal(t, uint64(1), st.Published)
	assert.Zero(t, st.Rejected, "waiting rejects nothing")
	assert.True(t, st.LastSucceeded)
	assert.Equal(t, 8080, c.Koanf().Int("port"))
	assert.NoError(t, c.Ready())
	code, body = probe(t, readyz)
	assert.Equal(t, http.StatusOK, code)
	assert.Regexp(t, `^ok      app: in force since \S+, no identity: replicas cannot be compared\n$`, body)
	assert.Empty(t, reported.all(), "the wait's failures are not OnError's")
	assert.Equal(t, []string{
		"WARN keepwatch: no good config yet, waiting for one", // missing
		"WARN keepwatch: no good config yet, waiting for one", // rejected
		"INFO keepwatch: config loaded, the wait is over",
	}, logs.at(slog.LevelInfo))
	assert.Equal(t, "1", attrs(logs.records(slog.LevelInfo)[2])["generation"])

	// A bad push: still ready, and the probe says the reload failed.
	v.update(map[string]string{"app.yaml": "port: 0\n"})
	reported.waitLen(t, 1)
	st = c.Stats()
	assert.Equal(t, uint64(1), st.Rejected)
	assert.False(t, st.LastSucceeded)
	assert.NoError(t, c.Ready(), "the config in force serves on")
	code, body = probe(t, readyz)
	assert.Equal(t, http.StatusOK, code)
	assert.Regexp(t, `^ok      app: in force since \S+, no identity: replicas cannot be compared; a reload failed at \S+ and was rejected, the config in force stays \(the error is in the log\)\n$`, body)
	assert.NotContains(t, body, "port", "no error text")

	// Recovery.
	v.update(map[string]string{"app.yaml": "port: 9090\n"})
	waitKoanf(t, c, func(k *koanf.Koanf) bool { return k.Int("port") == 9090 })
	st = c.Stats()
	assert.True(t, st.LastSucceeded)
	assert.Equal(t, uint64(2), st.Published)
	code, body = probe(t, readyz)
	assert.Equal(t, http.StatusOK, code)
	assert.NotContains(t, body, "failed")
}

// A wait that its context ends: the error wraps the last attempt's and the
// context's, nothing is watched any more, and the config can be started
// again, as if it had never been.
func TestStartWaitGivesUpWithItsContext(t *testing.T) {
	path := filepath.Join(t.TempDir(), "app.yaml")
	f := provider(t, path, file.WithWaitForPath())
	c := &live.Config{Name: "app", Load: loadYAML(f), Watch: []live.Watcher{f}, Logger: testLogger(t)}
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	err := c.StartWait(ctx)
	require.Error(t, err)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.ErrorIs(t, err, fs.ErrNotExist)
	assert.Regexp(t, `^keepwatch: config app not loaded: open \S+: no such file or directory \(gave up waiting: context deadline exceeded\)$`, err.Error())
	assert.Equal(t, file.ModeStopped, f.Stats().Mode, "nothing is watched")
	assert.Zero(t, c.Stats().Rejected)

	write(t, path, "port: 1\n")
	start(t, c)
	assert.Equal(t, 1, c.Koanf().Int("port"))
}

// Close ends a wait under way, and what it watched: a provider whose watch
// waits for its path, and one whose Watch fails until the path is there,
// as koanf's stock provider's does.
func TestCloseEndsStartWait(t *testing.T) {
	for _, opts := range [][]file.Option{{file.WithWaitForPath()}, nil} {
		path := filepath.Join(t.TempDir(), "app.yaml")
		f := provider(t, path, opts...)
		c := &live.Config{Load: loadYAML(f), Watch: []live.Watcher{f}, Logger: testLogger(t)}
		done := make(chan error, 1)
		go func() { done <- c.StartWait(context.Background()) }()
		require.Eventually(t, func() bool { return c.Stats().LastError != nil }, waitFor, tick)
		require.NoError(t, c.Close())
		err := <-done
		require.Error(t, err)
		assert.Equal(t, "keepwatch: config "+path+": closed while it waited for a good config", err.Error())
		assert.Equal(t, file.ModeStopped, f.Stats().Mode)
	}
}

// A keepwatch provider without WithWaitForPath: its Watch fails while the
// file is not there, and StartWait watches again at each attempt, until
// the file is there; then the watch is in place as after Start.
func TestStartWaitWatchesAgainAProviderWhoseWatchFailed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "app.yaml")
	f := provider(t, path)
	c := &live.Config{Name: "app", Load: loadYAML(f), Watch: []live.Watcher{f}, Logger: testLogger(t)}
	done := startWaiting(t, t.Context(), c)
	require.Eventually(t, func() bool { return c.Stats().LastError != nil }, waitFor, tick)
	assert.ErrorIs(t, c.Stats().LastError, fs.ErrNotExist)
	assert.Equal(t, file.ModeStopped, f.Stats().Mode, "its Watch failed")

	write(t, path, "port: 1\n")
	require.NoError(t, <-done)
	assert.Equal(t, 1, c.Koanf().Int("port"))
	write(t, path, "port: 2\n")
	waitKoanf(t, c, func(k *koanf.Koanf) bool { return k.Int("port") == 2 })
}

// A provider that is not keepwatch's, whose data comes without a change it
// tells of (as an environment variable would): StartWait's own retries
// load it.
func TestStartWaitRetriesWhatNoWatchTellsOf(t *testing.T) {
	src := &source{data: "port: [\n"}
	v := &live.Value[struct {
		Port int `koanf:"port"`
	}]{Name: "srv", Load: loadYAML(src), Watch: []live.Watcher{src}, Logger: testLogger(t)}
	done := startWaiting(t, t.Context(), v)
	require.Eventually(t, func() bool { return v.Stats().LastError != nil }, waitFor, tick)
	assert.ErrorIs(t, v.Ready(), live.ErrNotReady)
	src.set("port: 7\n") // no call back
	require.NoError(t, <-done)
	assert.Equal(t, 7, v.Get().Port)
	assert.NoError(t, v.Ready())
	assert.Zero(t, v.Stats().Rejected)
}

// Start tried again after failures, as a service may do in a loop of its
// own: the tries are no rejections, and the first good one is published.
func TestRetriesOfStartAreNotRejections(t *testing.T) {
	src := &source{data: "port: [\n"}
	c := &live.Config{Load: loadYAML(src), Watch: []live.Watcher{src}, Validate: positivePort, Logger: testLogger(t)}
	for range 3 {
		require.Error(t, c.Start())
	}
	src.set("port: 0\n")
	assert.ErrorIs(t, c.Start(), live.ErrRejected)
	src.set("port: 1\n")
	start(t, c)
	st := c.Stats()
	assert.Equal(t, uint64(1), st.Published)
	assert.Zero(t, st.Rejected)
	assert.True(t, st.LastSucceeded)
}

// One probe for a service's configs: ready when all are; a line each.
func TestReadyHandlerOfSeveralConfigs(t *testing.T) {
	good := &source{data: "port: 1\n"}
	a := start(t, &live.Config{Name: "a", Load: loadYAML(good), Watch: []live.Watcher{good}, Logger: testLogger(t)})
	secret := &source{data: "password: [hunter2\n"}
	b := &live.Config{Name: "b", Load: loadYAML(secret), Watch: []live.Watcher{secret}, Logger: testLogger(t)}
	require.Error(t, b.Start())
	h := live.ReadyHandler(a, b)

	code, body := probe(t, h)
	assert.Equal(t, http.StatusServiceUnavailable, code)
	lines := strings.Split(strings.TrimSuffix(body, "\n"), "\n")
	require.Len(t, lines, 2)
	assert.True(t, strings.HasPrefix(lines[0], "ok      a: in force since "), lines[0])
	assert.True(t, strings.HasPrefix(lines[1], "waiting b: no good config yet; the last attempt failed at "), lines[1])
	assert.NotContains(t, body, "hunter2", "an error may quote the file: it stays in the log")

	secret.set("password: hunter2\n")
	start(t, b)
	code, _ = probe(t, h)
	assert.Equal(t, http.StatusOK, code)
}

// positivePort is a Validate that wants a port above zero.
func positivePort(k *koanf.Koanf) error {
	if k.Int("port") <= 0 {
		return errors.New("port must be positive")
	}
	return nil
}
