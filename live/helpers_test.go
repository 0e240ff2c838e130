package live_test

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/keepwatch/file"
	"github.com/keepwatch/file/kubevol"
	"github.com/knadh/koanf/parsers/yaml"
	"github.com/knadh/koanf/v2"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// The records of a live config's start and reloads: a config started
// without an identity says so at DEBUG.
const (
	noIdentity  = "DEBUG keepwatch: config has no identity, its replicas cannot be compared; give it an IdentityKey"
	loaded      = "INFO keepwatch: config loaded"
	reloaded    = "INFO keepwatch: config reloaded"
	failureOver = "INFO keepwatch: config reloaded, the failure is over"
	notReloaded = "WARN keepwatch: config not reloaded, the last good one stays in force"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// waitFor is how long a test waits for something that should take
// milliseconds; generous, so that a loaded 2-core machine never fails a
// correct test.
const waitFor = 10 * time.Second

const tick = 2 * time.Millisecond

// starter is what the helpers need of a Config or a Value.
type starter interface {
	Start() error
	Shutdown(ctx context.Context) error
}

// start starts l and shuts it down, waiting, when the test ends.
func start[L starter](t *testing.T, l L) L {
	t.Helper()
	require.NoError(t, l.Start())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitFor)
		defer cancel()
		require.NoError(t, l.Shutdown(ctx))
	})
	return l
}

// provider is a keepwatch provider on path that logs to the test, shut
// down when the test ends (a no-op if nothing watches it by then).
func provider(t *testing.T, path string, opts ...file.Option) *file.File {
	t.Helper()
	f := file.Provider(path, append([]file.Option{file.WithLogger(testLogger(t))}, opts...)...)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitFor)
		defer cancel()
		require.NoError(t, f.Shutdown(ctx))
	})
	return f
}

// loadYAML is a Load that reads p with the YAML parser.
func loadYAML(p koanf.Provider) func(k *koanf.Koanf) error {
	return func(k *koanf.Koanf) error { return k.Load(p, yaml.Parser()) }
}

// testLogger sends the log to the test's log, shown on failure.
func testLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(string(p[:len(p)-1]))
	return len(p), nil
}

func write(t testing.TB, path, data string) {
	t.Helper()
	require.NoError(t, os.WriteFile(path, []byte(data), 0o644))
}

// replace writes data beside path and renames it over path, as editors
// that save atomically do; Windows refuses to replace an open file for a
// while, and Windows writers try again, as this does.
func replace(t testing.TB, path, data string) {
	t.Helper()
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp")
	require.NoError(t, os.WriteFile(tmp, []byte(data), 0o644))
	err := os.Rename(tmp, path)
	for deadline := time.Now().Add(waitFor); err != nil && runtime.GOOS == "windows" &&
		errors.Is(err, fs.ErrPermission) && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
		err = os.Rename(tmp, path)
	}
	require.NoError(t, err)
}

// volume is a kubelet-style volume that fails the test on any error.
type volume struct {
	t testing.TB
	v *kubevol.Volume
}

func newVolume(t testing.TB, dir string, payload map[string]string) *volume {
	t.Helper()
	v, err := kubevol.New(dir, payload)
	require.NoError(t, err)
	return &volume{t: t, v: v}
}

// update writes payload as kubelet's AtomicWriter does.
func (v *volume) update(payload map[string]string) {
	v.t.Helper()
	_, err := v.v.Update(payload)
	require.NoError(v.t, err)
}

// logRecords is a slog.Handler that keeps every record.
type logRecords struct {
	mu   sync.Mutex
	recs []slog.Record
}

func (l *logRecords) Enabled(context.Context, slog.Level) bool { return true }
func (l *logRecords) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *logRecords) WithGroup(string) slog.Handler            { return l }
func (l *logRecords) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.recs = append(l.recs, r.Clone())
	return nil
}

func (l *logRecords) logger() *slog.Logger { return slog.New(l) }

// at returns "LEVEL message" of each record at level or above.
func (l *logRecords) at(level slog.Level) []string {
	var out []string
	for _, r := range l.records(level) {
		out = append(out, r.Level.String()+" "+r.Message)
	}
	return out
}

// waitAt waits until there are n records at level or above, and returns
// them as at does: a reload's record is made right after it is published,
// which a test that waited for the config may see first.
func (l *logRecords) waitAt(t *testing.T, level slog.Level, n int) []string {
	t.Helper()
	require.Eventually(t, func() bool { return len(l.at(level)) >= n }, waitFor, tick, "records: %v", l.at(level))
	return l.at(level)
}

// records returns the records at level or above.
func (l *logRecords) records(level slog.Level) []slog.Record {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []slog.Record
	for _, r := range l.recs {
		if r.Level >= level {
			out = append(out, r)
		}
	}
	return out
}

// attrs returns a record's attributes as text, by key.
func attrs(r slog.Record) map[string]string {
	m := map[string]string{}
	r.Attrs(func(a slog.Attr) bool {
		m[a.Key] = a.Value.String()
		return true
	})
	return m
}

// errorLog keeps what OnError is told.
type errorLog struct {
	mu   sync.Mutex
	errs []error
}

func (e *errorLog) add(err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.errs = append(e.errs, err)
}

func (e *errorLog) all() []error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]error(nil), e.errs...)
}

// waitLen waits until OnError has been told n errors.
func (e *errorLog) waitLen(t *testing.T, n int) []error {
	t.Helper()
	require.Eventually(t, func() bool { return len(e.all()) >= n }, waitFor, tick, "errors: %v", e.all())
	return e.all()
}

// source is an in-memory provider with a koanf-style Watch, not one of
// keepwatch's: push and fail call the watch callback at once, on the
// caller's goroutine, so that a test drives reloads one at a time.
type source struct {
	mu   sync.Mutex
	data string
	cb   func(any, error)
}

func (s *source) ReadBytes() ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return []byte(s.data), nil
}

func (s *source) Read() (map[string]any, error) { return nil, errors.New("source: use ReadBytes") }

func (s *source) Watch(cb func(any, error)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cb = cb
	return nil
}

func (s *source) Unwatch() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cb = nil
	return nil
}

// set changes the data without telling the watch.
func (s *source) set(data string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.data = data
}

// push changes the data and tells the watch, if any, as a change.
func (s *source) push(data string) {
	s.set(data)
	s.call(nil)
}

// fail tells the watch of a problem.
func (s *source) fail(err error) { s.call(err) }

func (s *source) call(err error) {
	s.mu.Lock()
	cb := s.cb
	s.mu.Unlock()
	if cb != nil {
		cb(nil, err)
	}
}

// countInotify counts this process's inotify instances; the test is
// skipped where /proc does not tell.
func countInotify(t *testing.T) int {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd")
	}
	n := 0
	for _, e := range entries {
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil && strings.Contains(target, "inotify") {
			n++
		}
	}
	return n
}
