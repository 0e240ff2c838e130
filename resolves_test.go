package file

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Watch starts only on a path that resolves, as koanf's stock provider's
// does: code written for it asks Watch whether the file is there
// (tomtom215/lyrebirdaudio-go's TestWatchFailedToStart removes the file and
// its directory, and waits for Watch's error).

// unresolvedPaths are paths that do not resolve, each made in dir, and the
// error their lookup fails with.
var unresolvedPaths = []struct {
	name string
	make func(t *testing.T, dir string) string
	want error
}{
	{"a missing file", func(t *testing.T, dir string) string {
		return filepath.Join(dir, "config.yaml")
	}, fs.ErrNotExist},
	{"a missing directory", func(t *testing.T, dir string) string {
		return filepath.Join(dir, "conf", "config.yaml")
	}, fs.ErrNotExist},
	{"a dangling symlink", func(t *testing.T, dir string) string {
		symlink(t, "gone.yaml", filepath.Join(dir, "config.yaml"))
		return filepath.Join(dir, "config.yaml")
	}, fs.ErrNotExist},
	{"a ConfigMap key whose ..data is missing", func(t *testing.T, dir string) string {
		symlink(t, filepath.Join("..data", "config.yaml"), filepath.Join(dir, "config.yaml"))
		return filepath.Join(dir, "config.yaml")
	}, fs.ErrNotExist},
	{"a file on the way", func(t *testing.T, dir string) string {
		write(t, filepath.Join(dir, "conf"), "not a directory\n")
		return filepath.Join(dir, "conf", "config.yaml")
	}, syscall.ENOTDIR},
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("no symlinks here: %v", err)
	}
}

func TestWatchOnAPathThatDoesNotResolveFails(t *testing.T) {
	for _, tc := range unresolvedPaths {
		t.Run(tc.name, func(t *testing.T) {
			path := tc.make(t, t.TempDir())
			f := Provider(path, WithLogger(testLogger(t)))
			r := newRecorder(f)
			err := f.Watch(r.cb)
			require.Error(t, err)
			assertUnresolved(t, err, path, tc.want)
			assert.Equal(t, ModeStopped, f.Stats().Mode, "nothing watched")
		})
	}
}

// assertUnresolved checks Watch's error for a path that does not resolve:
// an *fs.PathError naming the path as given, holding the lookup's errno,
// so that the older os.IsNotExist holds too, as it does for the stock
// provider's error.
func assertUnresolved(t *testing.T, err error, path string, want error) {
	t.Helper()
	require.ErrorIs(t, err, want)
	var pe *fs.PathError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "watch", pe.Op)
	assert.Equal(t, path, pe.Path)
	var errno syscall.Errno
	assert.ErrorAs(t, pe.Err, &errno, "the errno itself, not wrapped")
	assert.Equal(t, errors.Is(want, fs.ErrNotExist), os.IsNotExist(err), "os.IsNotExist")
	if errors.Is(want, fs.ErrNotExist) {
		assert.EqualError(t, err, "watch "+path+": "+errno.Error())
	}
}

// The error names the path as the provider was given it, relative or not.
func TestWatchOnAMissingRelativePathNamesItAsGiven(t *testing.T) {
	t.Chdir(t.TempDir())
	err := Provider("conf/app.yaml").Watch(func(any, error) {})
	assert.EqualError(t, err, "watch conf/app.yaml: "+syscall.ENOENT.Error())
	assert.True(t, os.IsNotExist(err))
}

// A failed Watch leaves nothing behind: Unwatch and Shutdown have nothing
// to stop, and once the file is there Watch starts as on any provider.
func TestAFailedWatchLeavesNothingRunning(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "conf")
	path := filepath.Join(dir, "config.yaml")
	f := Provider(path, WithLogger(testLogger(t)), WithErrorCallbacks())
	r := newRecorder(f)
	require.ErrorIs(t, f.Watch(r.cb), fs.ErrNotExist)
	require.NoError(t, f.Unwatch())
	ctx, cancel := contextFor(waitFor)
	defer cancel()
	require.NoError(t, f.Shutdown(ctx))
	assert.Zero(t, f.Stats().Restarts)

	require.NoError(t, os.Mkdir(dir, 0o755))
	write(t, path, "v1\n")
	require.NoError(t, f.Watch(r.cb), "no watch left running: not ErrAlreadyWatching")
	t.Cleanup(func() { shutdown(t, f) })
	replace(t, path, "v2\n")
	r.waitContent(t, "v2\n")
	assert.Equal(t, []string{"v2\n"}, r.contents(), "v1 is the baseline; the failed Watch delivered nothing")
	assert.Empty(t, r.errs())
}

// A watch that runs is ErrAlreadyWatching's, whatever became of the path:
// the stock provider checks in that order too.
func TestWatchAgainOnAPathGoneSaysAlreadyWatching(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	write(t, path, "v1\n")
	f, r := watched(t, path)
	require.NoError(t, os.Remove(path))
	r.waitErr(t, fs.ErrNotExist)
	assert.ErrorIs(t, f.Watch(func(any, error) {}), ErrAlreadyWatching)
}

// Once Watch has started, the path going away is waited for, as ever: see
// also TestRemovedFileIsReportedOnceAndDeliveredWhenBack and
// TestRemovedDirectoryIsWatchedFromItsParent.
func TestAPathGoneRightAfterWatchIsWaitedFor(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "conf")
	path := filepath.Join(dir, "config.yaml")
	require.NoError(t, os.Mkdir(dir, 0o755))
	write(t, path, "v1\n")
	_, r := watched(t, path)
	require.NoError(t, os.RemoveAll(dir))
	r.waitErr(t, fs.ErrNotExist)
	require.NoError(t, os.Mkdir(dir, 0o755))
	write(t, path, "v2\n")
	c := r.waitContent(t, "v2\n")
	assert.Equal(t, fsnotify.Create, c.op)
}

// WithWaitForPath keeps the watch that starts before its file: each path
// that does not resolve is reported once, and delivered once it does.
func TestWithWaitForPathAWatchStartsAndWaits(t *testing.T) {
	for _, tc := range unresolvedPaths {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := tc.make(t, dir)
			_, r := watched(t, path, WithWaitForPath(), withBackoff(time.Hour, time.Hour))
			r.waitErr(t, tc.want)

			require.NoError(t, os.RemoveAll(dir))
			require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
			replace(t, path, "v1\n")
			c := r.waitContent(t, "v1\n")
			assert.Equal(t, fsnotify.Create, c.op)
			assert.Len(t, r.errs(), 1, "reported once: %s", r)
		})
	}
}

// A set's directory that does not resolve fails Watch, for Set and Glob
// alike, and so does a file a Set names; an empty glob is an empty set.
func TestSetWatchOnAMissingDirectoryFails(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "conf.d")
	for _, s := range []*FileSet{
		Set(dir, []string{"a.yaml"}, yamlParser{}),
		Glob(filepath.Join(dir, "*.yaml"), yamlParser{}),
	} {
		err := s.Watch(func(any, error) {})
		assertUnresolved(t, err, dir, fs.ErrNotExist)
		assert.Equal(t, ModeStopped, s.Stats().Mode, "nothing watched")
	}
}

func TestSetWatchOnAMissingNamedFileFails(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "a.yaml"), "a: 1\n")
	s := Set(dir, []string{"a.yaml", "b.yaml"}, yamlParser{})
	assertUnresolved(t, s.Watch(func(any, error) {}), filepath.Join(dir, "b.yaml"), fs.ErrNotExist)

	// In a kubelet volume, a key missing from the payload ..data leads to.
	v := newVolume(t, filepath.Join(t.TempDir(), "config"), map[string]string{"a.yaml": "a: 1\n"})
	s = Set(v.v.Dir, []string{"a.yaml", "b.yaml"}, yamlParser{})
	assertUnresolved(t, s.Watch(func(any, error) {}), filepath.Join(v.v.Dir, "b.yaml"), fs.ErrNotExist)
}

func TestGlobWatchWithNoFileMatchingStarts(t *testing.T) {
	dir := t.TempDir()
	s := Glob(filepath.Join(dir, "*.yaml"), yamlParser{}, WithLogger(testLogger(t)))
	r := watchedSet(t, s)
	write(t, filepath.Join(dir, "a.yaml"), "a: 1\n")
	r.wait(t, func(m map[string]any) bool { return m["a"] == 1 })
}

func TestSetWithWaitForPathWaitsForItsDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "conf.d")
	s := Set(dir, []string{"a.yaml"}, yamlParser{}, WithWaitForPath(), WithErrorCallbacks(), WithLogger(testLogger(t)))
	r := watchedSet(t, s)
	require.Eventually(t, func() bool { return len(r.errors()) > 0 }, waitFor, tick)
	require.NoError(t, os.Mkdir(dir, 0o755))
	replace(t, filepath.Join(dir, "a.yaml"), "a: 1\n")
	r.wait(t, func(m map[string]any) bool { return m["a"] == 1 })
	assert.Len(t, r.errors(), 1, "reported once")
	assert.ErrorIs(t, r.errors()[0], fs.ErrNotExist)
}
