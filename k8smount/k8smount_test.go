package k8smount_test

import (
	"context"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/keepwatch/file"
	"github.com/keepwatch/file/k8smount"
	"github.com/keepwatch/file/kubevol"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// The process's one inotify instance, shared by every watch: it
		// outlives them.
		goleak.IgnoreAnyFunction("github.com/keepwatch/file/internal/events.(*inotifyBackend).readEvents"),
		goleak.IgnoreAnyFunction("github.com/keepwatch/file/internal/events.(*inotifyBackend).readMounts"),
	)
}

// waitFor is how long a test waits for what should take milliseconds:
// generous, so that a loaded 2-core machine never fails a correct test.
const (
	waitFor = 10 * time.Second
	tick    = 2 * time.Millisecond
)

// payload is generation n of a three-key ConfigMap whose keys must agree.
func payload(n int) map[string]string {
	return map[string]string{
		"database_host": fmt.Sprint("db-", n),
		"database_port": fmt.Sprint(5000 + n),
		"generation":    fmt.Sprint(n),
	}
}

// generationOf checks that a read is one whole generation, and returns it.
func generationOf(m map[string]any) (int, error) {
	var n int
	if _, err := fmt.Sscan(fmt.Sprint(m["generation"]), &n); err != nil {
		return 0, fmt.Errorf("no generation in %v", m)
	}
	want := map[string]any{"database": map[string]any{"host": fmt.Sprint("db-", n), "port": fmt.Sprint(5000 + n)}, "generation": fmt.Sprint(n)}
	if fmt.Sprint(m) != fmt.Sprint(want) {
		return n, fmt.Errorf("mixed read: %v", m)
	}
	return n, nil
}

func newVolume(t *testing.T, p map[string]string) *kubevol.Volume {
	t.Helper()
	v, err := kubevol.New(filepath.Join(t.TempDir(), "config"), p)
	require.NoError(t, err)
	return v
}

func update(t *testing.T, v *kubevol.Volume, p map[string]string) {
	t.Helper()
	_, err := v.Update(p)
	require.NoError(t, err)
}

// provider is a drop-in on dir that logs to the test, shut down when the
// test ends.
func provider(t *testing.T, dir string, opts ...file.Option) *k8smount.K8SMount {
	t.Helper()
	logger := slog.New(slog.NewTextHandler(testWriter{t}, nil))
	p := k8smount.Provider(dir, "_", k8smount.Opt{FileOptions: append([]file.Option{file.WithLogger(logger)}, opts...)})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitFor)
		defer cancel()
		require.NoError(t, p.Shutdown(ctx))
	})
	return p
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Log(string(b[:len(b)-1]))
	return len(b), nil
}

// recorder records each callback, and what Read gives inside it.
type recorder struct {
	p     *k8smount.K8SMount
	mu    sync.Mutex
	gens  []int
	errs  []error
	after atomic.Bool  // set once Unwatch has returned
	late  atomic.Int64 // callbacks begun after that
}

func (r *recorder) cb(event any, err error) {
	if r.after.Load() {
		r.late.Add(1)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		r.errs = append(r.errs, err)
		return
	}
	if event != nil {
		r.errs = append(r.errs, fmt.Errorf("event %v: upstream calls back with nil", event))
	}
	m, err := r.p.Read()
	if err == nil {
		var n int
		n, err = generationOf(m)
		r.gens = append(r.gens, n)
	}
	if err != nil {
		r.errs = append(r.errs, err)
	}
}

func (r *recorder) snapshot() ([]int, []error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]int(nil), r.gens...), append([]error(nil), r.errs...)
}

// wait waits until the last callback read generation n.
func (r *recorder) wait(t *testing.T, n int) {
	t.Helper()
	require.Eventually(t, func() bool {
		gens, _ := r.snapshot()
		return len(gens) > 0 && gens[len(gens)-1] == n
	}, waitFor, tick, "waiting for generation %d: %v", n, r)
}

func (r *recorder) String() string {
	gens, errs := r.snapshot()
	return fmt.Sprintf("generations %v, errors %v", gens, errs)
}

func watch(t *testing.T, p *k8smount.K8SMount) *recorder {
	t.Helper()
	r := &recorder{p: p}
	require.NoError(t, p.Watch(r.cb))
	return r
}

// Every read made while kubelet updates the mount as fast as it can is one
// whole generation: no key from another update, none missing, no failed
// read. (Upstream mixed 912 of 3,564 such reads, and failed 12.)
func TestAReadTakesEveryKeyFromOneGeneration(t *testing.T) {
	v := newVolume(t, payload(0))
	p := provider(t, v.Dir)
	const updates = 100
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(done)
		for i := 1; i <= updates; i++ {
			if _, err := v.Update(payload(i)); err != nil {
				t.Error(err)
				return
			}
		}
	})
	var reads, last atomic.Int64
	for range 2 {
		wg.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				m, err := p.Read()
				if err != nil {
					t.Errorf("read %d failed: %v", reads.Load(), err)
					return
				}
				n, err := generationOf(m)
				if err != nil {
					t.Error(err)
					return
				}
				reads.Add(1)
				last.Store(int64(n))
			}
		})
	}
	wg.Wait()
	t.Logf("%d reads during %d updates, the last of generation %d", reads.Load(), updates, last.Load())
	assert.Positive(t, reads.Load())
}

// Each kubelet update of a three-key mount is one callback, and Read in it
// gives that update whole. An update that changes nothing is none.
func TestOneCallbackPerUpdate(t *testing.T) {
	v := newVolume(t, payload(0))
	p := provider(t, v.Dir)
	_, err := p.Read()
	require.NoError(t, err)
	r := watch(t, p)
	const updates = 10
	for i := 1; i <= updates; i++ {
		update(t, v, payload(i))
		r.wait(t, i)
		update(t, v, payload(i)) // the same payload: kubelet writes nothing
	}
	// A last update: any callback the earlier ones made late would be
	// before it.
	update(t, v, payload(updates+1))
	r.wait(t, updates+1)
	gens, errs := r.snapshot()
	want := make([]int, 0, updates+1)
	for i := 1; i <= updates+1; i++ {
		want = append(want, i)
	}
	assert.Equal(t, want, gens, "one callback per update, in order")
	assert.Empty(t, errs)
}

// The watch goes on through the mount directory removed and made again,
// and through a generation that cannot be read (a key over the size
// limit): the problem is called back when asked for, and the next good
// update is delivered.
func TestTheWatchNeverDies(t *testing.T) {
	v := newVolume(t, payload(0))
	p := provider(t, v.Dir, file.WithErrorCallbacks(), file.WithMaxSize(4096))
	r := watch(t, p)
	update(t, v, payload(1))
	r.wait(t, 1)

	// The mount made again.
	path := v.Dir
	require.NoError(t, os.RemoveAll(path))
	made := newVolume(t, payload(2))
	require.NoError(t, os.Rename(made.Dir, path))
	v = &kubevol.Volume{Dir: path}
	r.wait(t, 2)
	update(t, v, payload(3))
	r.wait(t, 3)
	// Missing for longer than the quiet window (the making of a volume, on
	// a loaded machine), the directory is a problem called back, before the
	// next generation is delivered; that is all the remaking may call back.
	_, before := r.snapshot()
	for _, err := range before {
		assert.ErrorIs(t, err, fs.ErrNotExist)
	}

	// A generation that cannot be read.
	big := payload(4)
	big["database_host"] = strings.Repeat("x", 5000)
	update(t, v, big)
	require.Eventually(t, func() bool {
		_, errs := r.snapshot()
		return len(errs) > len(before)
	}, waitFor, tick, "%v", r)
	_, errs := r.snapshot()
	assert.ErrorIs(t, errs[len(before)], file.ErrFileTooLarge)
	update(t, v, payload(5))
	r.wait(t, 5)
	_, errs = r.snapshot()
	assert.Len(t, errs, len(before)+1, "one problem, called back once")
}

// Nothing is called back once Unwatch has returned, however busy the
// mount; and a callback may call Unwatch.
func TestNothingIsCalledBackAfterUnwatch(t *testing.T) {
	v := newVolume(t, payload(0))
	p := provider(t, v.Dir)
	r := watch(t, p)
	for i := 1; i <= 20; i++ {
		update(t, v, payload(i))
	}
	require.NoError(t, p.Unwatch())
	r.after.Store(true)
	for i := 21; i <= 40; i++ {
		update(t, v, payload(i))
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	require.NoError(t, p.Shutdown(ctx), "the watch ends")
	assert.Zero(t, r.late.Load(), "callbacks begun after Unwatch returned")
	_, errs := r.snapshot()
	assert.Empty(t, errs)

	// Unwatch from inside the callback, then Watch again.
	unwatched := make(chan struct{})
	require.NoError(t, p.Watch(func(any, error) {
		assert.NoError(t, p.Unwatch())
		close(unwatched)
	}))
	update(t, v, payload(41))
	<-unwatched
	r2 := watch(t, p)
	update(t, v, payload(42))
	r2.wait(t, 42)
}

// A second Watch is refused with upstream's error until Unwatch.
func TestASecondWatchIsRefused(t *testing.T) {
	v := newVolume(t, payload(0))
	p := provider(t, v.Dir)
	watch(t, p)
	err := p.Watch(func(any, error) {})
	assert.ErrorIs(t, err, k8smount.ErrAlreadyWatched)
	assert.EqualError(t, err, "mount is already being watched")
}

// The keys of a projected volume's subdirectory are read, split by the
// delimiter as upstream splits the file's own name; a key that is another
// key's parent always gives way to the parent's map.
func TestKeysInSubdirectoriesAndParents(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "projected")
	gen := "..2026_11_27_10_00_00.1"
	for name, data := range map[string]string{"app/log_level": "debug", "app/name": "api", "top": "1"} {
		path := filepath.Join(dir, gen, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(data), 0o644))
	}
	require.NoError(t, os.Symlink(gen, filepath.Join(dir, "..data")))
	for _, key := range []string{"app", "top"} {
		require.NoError(t, os.Symlink(filepath.Join("..data", key), filepath.Join(dir, key)))
	}
	m, err := k8smount.Provider(dir, "_", k8smount.Opt{}).Read()
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"app": map[string]any{"log": map[string]any{"level": "debug"}, "name": "api"}, "top": "1"}, m)

	plain := t.TempDir()
	for name, data := range map[string]string{"a": "leaf", "a.b": "deeper"} {
		require.NoError(t, os.WriteFile(filepath.Join(plain, name), []byte(data), 0o644))
	}
	for range 5 {
		m, err := k8smount.Provider(plain, ".", k8smount.Opt{}).Read()
		require.NoError(t, err)
		assert.Equal(t, map[string]any{"a": map[string]any{"b": "deeper"}}, m)
	}
}

// Errors are upstream's texts around keepwatch's errors.
func TestErrorsAreUpstreamsAroundKeepwatchs(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing")
	_, err := k8smount.Provider(missing, ".", k8smount.Opt{}).Read()
	assert.EqualError(t, err, "failed to open mount: open "+missing+": no such file or directory")
	assert.ErrorIs(t, err, fs.ErrNotExist)
}

// A link out of the mount is no key: a directory another container writes
// cannot make the process read its other files.
func TestALinkOutOfTheMountIsNoKey(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "token")
	require.NoError(t, os.WriteFile(secret, []byte("s3cret"), 0o600))
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "log_level"), []byte("info"), 0o644))
	require.NoError(t, os.Symlink(secret, filepath.Join(dir, "stolen")))
	m, err := k8smount.Provider(dir, "_", k8smount.Opt{}).Read()
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"log": map[string]any{"level": "info"}}, m)
}
