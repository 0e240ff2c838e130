package prom_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/keepwatch/file"
	"github.com/keepwatch/file/keepwatchprom"
	"github.com/keepwatch/file/live"
	"github.com/knadh/koanf/parsers/yaml"
	"github.com/knadh/koanf/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// childEnv tells the test binary that it runs as the child of
// inMountNamespace, for the test it names.
const childEnv = "KEEPWATCH_PROM_CHILD"

// tick is how often a test looks again for what it waits for.
const tick = 2 * time.Millisecond

// inMountNamespace runs the test again in a child process with a mount
// namespace of its own, where it may mount: Go makes the child's mounts
// private, so none reaches the machine, and they end with it. It returns
// true in the child, which goes on with the test, and false in the parent,
// which passes on the child's result. It needs root.
func inMountNamespace(t *testing.T) bool {
	t.Helper()
	if os.Getenv(childEnv) == t.Name() {
		return true
	}
	if os.Geteuid() != 0 {
		t.Skip("mounting needs root")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), childEnv+"="+t.Name())
	cmd.SysProcAttr = &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS}
	out, err := cmd.CombinedOutput()
	t.Logf("child:\n%s", out)
	require.NoError(t, err, "the child failed")
	require.Contains(t, string(out), "--- PASS: "+t.Name(), "the child ran the test")
	return false
}

// A service whose config is a single file mounted on its own, as docker's
// -v ./config.yaml:/etc/app/config.yaml makes it (here a real bind mount):
// edits in place of the source are reloaded; a replacement of it on the
// host side is told by the metric an alert watches, the live config's
// Stats, its readiness probe's body (ready still: the config in force
// serves) and OnError; the mount made again, the new file is reloaded and
// all of them clear.
func TestAReplacedMountSourceIsToldByTheMetricsAndReadiness(t *testing.T) {
	if !inMountNamespace(t) {
		return
	}
	dir := t.TempDir()
	source, point := filepath.Join(dir, "host", "config.yaml"), filepath.Join(dir, "etc", "app", "config.yaml")
	require.NoError(t, os.MkdirAll(filepath.Dir(source), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Dir(point), 0o755))
	require.NoError(t, os.WriteFile(source, []byte("port: 8080\n"), 0o644))
	require.NoError(t, os.WriteFile(point, nil, 0o644))
	require.NoError(t, syscall.Mount(source, point, "", syscall.MS_BIND, ""))

	f := file.Provider(point, file.WithErrorCallbacks())
	told := make(chan error, 10)
	app := &live.Value[*App]{Name: "app", Load: func(k *koanf.Koanf) error { return k.Load(f, yaml.Parser()) },
		Watch: []live.Watcher{f}, OnError: func(err error) { told <- err }}
	require.NoError(t, app.Start())
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitFor)
		defer cancel()
		require.NoError(t, app.Shutdown(ctx))
	}()
	reg := prometheus.NewRegistry()
	col := keepwatchprom.NewCollector()
	col.AddConfig(app)
	col.AddProvider(f)
	reg.MustRegister(col)
	replaced := "keepwatch_watch_mount_source_replaced{path=" + point + "}"
	readyz := func() (int, string) {
		rec := httptest.NewRecorder()
		live.ReadyHandler(app).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
		return rec.Code, rec.Body.String()
	}
	assert.ErrorIs(t, <-told, file.ErrSubPathMount)
	assert.Equal(t, 1.0, scrape(t, reg)["keepwatch_watch_subpath_mount{path="+point+"}"])
	assert.Equal(t, 0.0, scrape(t, reg)[replaced])

	for port := 8081; port <= 8090; port++ {
		require.NoError(t, os.WriteFile(source, fmt.Appendf(nil, "port: %d\n", port), 0o644)) // in place
		require.Eventually(t, func() bool { return app.Get().Port == port }, waitFor, tick, "port %d", port)
	}
	assert.Equal(t, uint64(11), app.Stats().Published, "each edit in place reloaded")

	tmp := source + ".tmp" // sed -i, an editor's save: a new file renamed over the source
	require.NoError(t, os.WriteFile(tmp, []byte("port: 9090\n"), 0o644))
	require.NoError(t, os.Rename(tmp, source))
	err := <-told
	assert.ErrorIs(t, err, file.ErrSourceReplaced)
	assert.Equal(t, 1.0, scrape(t, reg)[replaced])
	assert.Equal(t, []string{point}, app.Stats().SourceReplaced)
	code, body := readyz()
	assert.Equal(t, http.StatusOK, code, "the config in force serves on")
	assert.Contains(t, body, point+": its mount's source was replaced, its changes no longer arrive until a restart")
	assert.Equal(t, 8090, app.Get().Port)

	// The mount made again, as a restarted container has it. Detached, not
	// unmounted: a read of the watch's may hold the mount busy (EBUSY) for
	// the moment it takes.
	require.NoError(t, syscall.Unmount(point, syscall.MNT_DETACH))
	require.NoError(t, syscall.Mount(source, point, "", syscall.MS_BIND, ""))
	require.Eventually(t, func() bool { return app.Get().Port == 9090 }, waitFor, tick)
	require.Eventually(t, func() bool { return scrape(t, reg)[replaced] == 0 }, waitFor, tick)
	assert.Empty(t, app.Stats().SourceReplaced)
	_, body = readyz()
	assert.NotContains(t, body, "replaced")
	select {
	case err := <-told:
		assert.Fail(t, "told once", "and again: %v", errors.Unwrap(err))
	default:
	}
	require.NoError(t, syscall.Unmount(point, syscall.MNT_DETACH))
}
