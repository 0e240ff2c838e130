package file

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The API of koanf's stock provider, as user code sees it.

func TestReadBytesReadsTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	write(t, path, "a: 1\n")
	b, err := Provider(path).ReadBytes()
	require.NoError(t, err)
	assert.Equal(t, "a: 1\n", string(b))
}

func TestReadIsUnsupportedWithTheStockText(t *testing.T) {
	_, err := Provider("x").Read()
	require.EqualError(t, err, "file provider does not support this method")
}

func TestMissingFileKeepsThePathErrorOfOpen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing.yaml")
	_, err := Provider(path).ReadBytes()
	require.Error(t, err)
	assert.True(t, os.IsNotExist(err), "os.IsNotExist must still work: %v", err)
	assert.ErrorIs(t, err, fs.ErrNotExist)
	_, stock := os.ReadFile(path) // what the stock provider returns
	assert.EqualError(t, err, stock.Error())
}

func TestWatchTwiceReturnsTheStockError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	write(t, path, "a: 1\n")
	f, _ := watched(t, path)
	err := f.Watch(func(any, error) {})
	require.ErrorIs(t, err, ErrAlreadyWatching)
	assert.EqualError(t, err, "file is already being watched")
}

func TestWatchRejectsNilCallback(t *testing.T) {
	require.Error(t, Provider("x").Watch(nil))
}

// Change is judged by content.

func TestUpdateBetweenReadBytesAndWatchIsDelivered(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	write(t, path, "v1\n")
	f := Provider(path, WithLogger(testLogger(t)))
	b, err := f.ReadBytes()
	require.NoError(t, err)
	require.Equal(t, "v1\n", string(b))

	replace(t, path, "v2\n") // lands before Watch: no event will ever tell
	r := newRecorder(f)
	require.NoError(t, f.Watch(r.cb))
	defer shutdown(t, f)
	r.waitContent(t, "v2\n")
}

func TestWatchWithoutReadBytesTakesTheFileAsBaseline(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	write(t, path, "v1\n")
	f := Provider(path, WithLogger(testLogger(t)))
	r := newRecorder(f)
	require.NoError(t, f.Watch(r.cb))
	defer shutdown(t, f)
	sentinel(t, r, path)
	assert.Equal(t, []string{"sentinel\n"}, r.contents())
}

func TestTouchChmodAndIdenticalRewritesFireNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	write(t, path, "v1\n")
	_, r := watched(t, path)

	later := time.Now().Add(time.Hour)
	require.NoError(t, os.Chtimes(path, later, later))
	require.NoError(t, os.Chmod(path, 0o600))
	write(t, path, "v1\n")
	replace(t, path, "v1\n")
	sentinel(t, r, path)

	assert.Equal(t, []string{"sentinel\n"}, r.contents())
	assert.Empty(t, r.errs())
}

func TestBurstDeliversTheFinalContentWithoutRepeats(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	write(t, path, "v0\n")
	_, r := watched(t, path)
	for i := 1; i <= 200; i++ {
		replace(t, path, strings.Repeat("x", i)+"\n")
	}
	r.waitContent(t, strings.Repeat("x", 200)+"\n")
	assertNoRepeats(t, r.contents())
	assert.Empty(t, r.errs())
}

// An in-place writer (truncate, then write in pieces) is read only after it
// has gone quiet: the callback never sees an empty or half-written file.
func TestInPlaceWritesDeliverOnlyCompleteContent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	write(t, path, "v0\n")
	// A long window, so that no pause of a loaded machine between the
	// writer's steps can look like the end of the write.
	_, r := watched(t, path, WithQuietWindow(2*time.Second))

	full := strings.Repeat("key: value\n", 100)
	fd, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	require.NoError(t, err)
	for i := 0; i < len(full); i += 100 {
		_, err := fd.WriteString(full[i:min(i+100, len(full))])
		require.NoError(t, err)
		time.Sleep(time.Millisecond)
	}
	require.NoError(t, fd.Close())

	r.waitContent(t, full)
	assert.Equal(t, []string{full}, r.contents())
}

// Every directory along the symlink chain is watched.

func TestEditOfASymlinkTargetInAnotherDirectory(t *testing.T) {
	root := t.TempDir()
	linkDir, dirB, dirC := filepath.Join(root, "etc"), filepath.Join(root, "b"), filepath.Join(root, "c")
	for _, d := range []string{linkDir, dirB, dirC} {
		require.NoError(t, os.Mkdir(d, 0o755))
	}
	write(t, filepath.Join(dirB, "real.yaml"), "b1\n")
	write(t, filepath.Join(dirC, "real.yaml"), "c1\n")
	link := filepath.Join(linkDir, "config.yaml")
	require.NoError(t, os.Symlink(filepath.Join(dirB, "real.yaml"), link))
	_, r := watched(t, link)

	write(t, filepath.Join(dirB, "real.yaml"), "b2\n") // in place, in b
	r.waitContent(t, "b2\n")
	replace(t, filepath.Join(dirB, "real.yaml"), "b3\n") // rename-over, in b
	r.waitContent(t, "b3\n")

	// Retarget the link (ln -sfn): the new target is watched, the old not.
	tmp := filepath.Join(linkDir, ".tmp-link")
	require.NoError(t, os.Symlink(filepath.Join(dirC, "real.yaml"), tmp))
	require.NoError(t, os.Rename(tmp, link))
	r.waitContent(t, "c1\n")
	write(t, filepath.Join(dirB, "real.yaml"), "b4\n")
	write(t, filepath.Join(dirC, "real.yaml"), "c2\n")
	r.waitContent(t, "c2\n")
	assert.Equal(t, []string{"b2\n", "b3\n", "c1\n", "c2\n"}, r.contents())
}

func TestRelativeSymlinkChainThroughADirectoryLink(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "releases", "v1"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "releases", "v2"), 0o755))
	write(t, filepath.Join(root, "releases", "v1", "app.yaml"), "v1\n")
	write(t, filepath.Join(root, "releases", "v2", "app.yaml"), "v2\n")
	require.NoError(t, os.Symlink("releases/v1", filepath.Join(root, "current")))
	_, r := watched(t, filepath.Join(root, "current", "app.yaml"))

	tmp := filepath.Join(root, "current.tmp")
	require.NoError(t, os.Symlink("releases/v2", tmp))
	require.NoError(t, os.Rename(tmp, filepath.Join(root, "current")))
	r.waitContent(t, "v2\n")
	write(t, filepath.Join(root, "releases", "v2", "app.yaml"), "v2b\n")
	r.waitContent(t, "v2b\n")
}

// A missing file or directory is reported once and delivered as soon as it
// is back, without waiting for a backoff: the backoff here is an hour.

func TestRemovedFileIsReportedOnceAndDeliveredWhenBack(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.yaml")
	write(t, path, "v1\n")
	_, r := watched(t, path, withBackoff(time.Hour, time.Hour))

	require.NoError(t, os.Remove(path))
	err := r.waitErr(t, fs.ErrNotExist)
	assert.Contains(t, err.Error(), path)
	write(t, filepath.Join(dir, "unrelated"), "x") // more events in the directory
	require.NoError(t, os.Remove(filepath.Join(dir, "unrelated")))

	write(t, path, "v2\n")
	c := r.waitContent(t, "v2\n")
	assert.Equal(t, fsnotify.Create, c.op)
	assert.Equal(t, path, c.name)
	assert.Len(t, r.errs(), 1, "the missing file is one problem: %s", r)

	write(t, path, "v3\n")
	c = r.waitContent(t, "v3\n")
	assert.Equal(t, fsnotify.Write, c.op)
}

// Found by FuzzSessionEvents: after "file missing", the file coming back
// with the content the user last got must still be said, or the callback's
// last word stays an error about a file that is fine.
func TestFileBackWithTheSameContentIsDelivered(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	write(t, path, "v1\n")
	_, r := watched(t, path, withBackoff(time.Hour, time.Hour))

	require.NoError(t, os.Remove(path))
	r.waitErr(t, fs.ErrNotExist)
	write(t, path, "v1\n")
	c := r.waitContent(t, "v1\n")
	assert.Equal(t, fsnotify.Create, c.op)

	write(t, path, "v1\n")
	replace(t, path, "v2\n")
	r.waitContent(t, "v2\n")
	assert.Equal(t, []string{"v1\n", "v2\n"}, r.contents(), "no repeat without a problem in between")
}

func TestRemovedDirectoryIsWatchedFromItsParent(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "a", "b")
	path := filepath.Join(dir, "config.yaml")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	write(t, path, "v1\n")
	_, r := watched(t, path, withBackoff(time.Hour, time.Hour))

	for i := 2; i <= 4; i++ {
		require.NoError(t, os.RemoveAll(filepath.Join(root, "a")))
		r.waitErr(t, fs.ErrNotExist)
		require.NoError(t, os.MkdirAll(dir, 0o755))
		want := strings.Repeat("v", i) + "\n"
		write(t, path, want)
		r.waitContent(t, want)
	}
}

func TestWatchOnAMissingFileWithWaitForPathReportsAndWaits(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "not", "yet")
	path := filepath.Join(dir, "config.yaml")
	_, r := watched(t, path, withBackoff(time.Hour, time.Hour), WithWaitForPath())
	r.waitErr(t, fs.ErrNotExist)

	require.NoError(t, os.MkdirAll(dir, 0o755))
	replace(t, path, "v1\n")
	c := r.waitContent(t, "v1\n")
	assert.Equal(t, fsnotify.Create, c.op)
}

func TestReadBytesInsideTheCallbackReturnsTheDeliveredContent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	write(t, path, "v1\n")
	f := Provider(path, WithLogger(testLogger(t)))
	_, _ = f.ReadBytes()
	got := make(chan string, 1)
	require.NoError(t, f.Watch(func(_ any, err error) {
		if err != nil {
			return
		}
		assert.NoError(t, replaceFile(path, "v3\n")) // changes under the callback
		b, _ := f.ReadBytes()
		got <- string(b)
	}))
	defer shutdown(t, f)
	replace(t, path, "v2\n")
	assert.Equal(t, "v2\n", <-got)
	assert.Equal(t, "v3\n", <-got, "the change made during the callback is delivered next")
}
