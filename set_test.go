package file

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/keepwatch/file/internal/decide"
)

// A set merges its files in order, later over earlier, as koanf merges
// what it loads (tests/koanf loads sets into koanf, and checks merge
// against koanf's maps.Merge).
func TestASetMergesItsFilesInOrder(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "base.yaml"), "a: 1\nb: {x: 1, y: 1}\n")
	write(t, filepath.Join(dir, "override.yaml"), "b: {y: 2}\nc: 3\n")
	m, err := Set(dir, []string{"base.yaml", "override.yaml"}, yamlParser{}).Read()
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"a": 1, "b": map[string]any{"x": 1, "y": 2}, "c": 3}, m)

	write(t, filepath.Join(dir, "broken.yaml"), "a: [\n")
	_, err = Set(dir, []string{"base.yaml", "broken.yaml"}, yamlParser{}).Read()
	assert.ErrorContains(t, err, "broken.yaml")
}

// k.Load(set, parser), the habit from single files, makes koanf ask the set
// for bytes; the error names the call that works (tests/koanf makes that
// call). A set made without a parser says where the parser goes.
func TestASetsMisuseNamesTheRightCall(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "base.yaml"), "a: 1\n")
	_, err := Set(dir, []string{"base.yaml"}, yamlParser{}).ReadBytes()
	require.ErrorIs(t, err, errSetBytes)
	assert.EqualError(t, err, "keepwatch: a file set has no single content: load it with k.Load(set, nil)")

	_, err = Set(dir, []string{"base.yaml"}, nil).Read()
	require.ErrorIs(t, err, errNoParser)
	assert.EqualError(t, err, "read "+dir+": keepwatch: a file set needs a parser: give one to Set or Glob")
}

func TestAGlobSetTakesItsFilesInLexicalOrder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "conf.d")
	require.NoError(t, os.Mkdir(dir, 0o755))
	write(t, filepath.Join(dir, "20-limits.yaml"), "limit: 2\n")
	write(t, filepath.Join(dir, "10-base.yaml"), "limit: 1\nname: app\n")
	write(t, filepath.Join(dir, "notes.txt"), "limit: 99\n")
	write(t, filepath.Join(dir, ".hidden.yaml"), "limit: 98\n")
	m, err := Glob(filepath.Join(dir, "*.yaml"), yamlParser{}).Read()
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"limit": 2, "name": "app"}, m)
}

// A glob's set is files: a subdirectory its pattern matches, or a link to
// one, is no member (it failed the whole set's read, as a file that is not
// regular). A link to a file is one.
func TestAGlobSetLeavesDirectoriesOut(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "conf.d")
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "old.yaml"), 0o755))
	require.NoError(t, os.Symlink("old.yaml", filepath.Join(dir, "older.yaml")))
	write(t, filepath.Join(dir, "10-base.yaml"), "name: app\n")
	require.NoError(t, os.Symlink("10-base.yaml", filepath.Join(dir, "20-link.yaml")))
	s := Glob(filepath.Join(dir, "*.yaml"), yamlParser{})
	m, err := s.Read()
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"name": "app"}, m)

	r := watchedSet(t, s)
	require.NoError(t, os.Mkdir(filepath.Join(dir, "new.yaml"), 0o755))
	write(t, filepath.Join(dir, "30-more.yaml"), "more: yes\n")
	r.wait(t, func(m map[string]any) bool { return m["more"] == "yes" })
	_, ev, _ := r.last()
	assert.Equal(t, []string{"10-base.yaml", "20-link.yaml", "30-more.yaml"}, ev.Files)
	assert.Empty(t, r.errors())
}

// One callback per change of the set, never one per file; in a plain
// directory, a set rewritten file by file is read once it has settled.
func TestASetRewrittenFileByFileIsDeliveredOnce(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "policy.yaml"), "generation: 0\n")
	write(t, filepath.Join(dir, "roles.yaml"), "roles_generation: 0\n")
	s := Set(dir, []string{"policy.yaml", "roles.yaml"}, yamlParser{}, WithQuietWindow(300*time.Millisecond))
	r := watchedSet(t, s)

	replace(t, filepath.Join(dir, "policy.yaml"), "generation: 1\n")
	time.Sleep(20 * time.Millisecond) // the second file comes a little later
	write(t, filepath.Join(dir, "roles.yaml"), "roles_generation: 1\n")
	m := r.wait(t, func(m map[string]any) bool { return m["roles_generation"] == 1 })
	assert.Equal(t, 1, m["generation"])
	assert.Len(t, r.snapshot(), 1, "one delivery for the two files")
	_, ev, _ := r.last()
	assert.Equal(t, []string{"policy.yaml", "roles.yaml"}, ev.Files)
	assert.Empty(t, ev.Generation, "not a kubelet volume")
}

// A file of a conf.d set appearing or going is a change: its keys come and
// go with it.
func TestAGlobSetFollowsFilesComingAndGoing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "conf.d")
	require.NoError(t, os.Mkdir(dir, 0o755))
	write(t, filepath.Join(dir, "10-base.yaml"), "name: app\n")
	s := Glob(filepath.Join(dir, "*.yaml"), yamlParser{}, WithQuietWindow(20*time.Millisecond))
	r := watchedSet(t, s)

	replace(t, filepath.Join(dir, "50-feature.yaml"), "feature: on\n")
	r.wait(t, func(m map[string]any) bool { return m["feature"] == "on" })
	write(t, filepath.Join(dir, "notes.txt"), "ignored\n")
	require.NoError(t, os.Remove(filepath.Join(dir, "50-feature.yaml")))
	m := r.wait(t, func(m map[string]any) bool { return m["feature"] == nil })
	assert.Equal(t, map[string]any{"name": "app"}, m, "its keys went with it")
	assert.Empty(t, r.errors())
}

// In a kubelet volume, each read goes through one resolution of ..data: a
// set whose files must agree (the same generation in each) never mixes two
// generations, however fast the updates come, and the last one is
// delivered, with its generation.
func TestAKubeletSetNeverMixesGenerations(t *testing.T) {
	t.Parallel() // its own volume; it judges content, not time
	payload := func(n int) map[string]string {
		return map[string]string{
			"policy.yaml": fmt.Sprintf("policy_generation: %d\n", n),
			"roles.yaml":  fmt.Sprintf("roles_generation: %d\n", n),
		}
	}
	v := newVolume(t, filepath.Join(t.TempDir(), "authz"), payload(0))
	s := Set(v.v.Dir, []string{"policy.yaml", "roles.yaml"}, yamlParser{})
	r := watchedSet(t, s)
	const updates = 200
	for i := 1; i <= updates; i++ {
		v.update(payload(i))
	}
	r.wait(t, func(m map[string]any) bool { return m["policy_generation"] == updates })
	for i, m := range r.snapshot() {
		require.Equal(t, m["policy_generation"], m["roles_generation"], "delivery %d mixes generations: %v", i, m)
	}
	_, ev, _ := r.last()
	data, err := os.Readlink(filepath.Join(v.v.Dir, "..data"))
	require.NoError(t, err)
	assert.Equal(t, data, ev.Generation)
	assert.Empty(t, r.errors())
}

// A named file missing is a problem, the last good set stays delivered,
// and the set is delivered again once the file is back.
func TestASetWithAFileMissingReportsItAndWaits(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "a.yaml"), "a: 1\n")
	write(t, filepath.Join(dir, "b.yaml"), "b: 1\n")
	s := Set(dir, []string{"a.yaml", "b.yaml"}, yamlParser{}, WithErrorCallbacks(), WithLogger(testLogger(t)))
	r := watchedSet(t, s)

	require.NoError(t, os.Remove(filepath.Join(dir, "b.yaml")))
	require.Eventually(t, func() bool { return len(r.errors()) == 1 }, waitFor, tick)
	assert.ErrorIs(t, r.errors()[0], fs.ErrNotExist)
	assert.ErrorContains(t, r.errors()[0], "b.yaml")
	replace(t, filepath.Join(dir, "b.yaml"), "b: 2\n")
	r.wait(t, func(m map[string]any) bool { return m["b"] == 2 })
	// The missing file was waited for by the directory's watch: the watch
	// itself never failed over it.
	assert.Zero(t, s.Stats().Restarts)

	// Bad input is refused: a directory where a file should be.
	require.NoError(t, os.Remove(filepath.Join(dir, "b.yaml")))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "b.yaml"), 0o755))
	require.Eventually(t, func() bool {
		errs := r.errors()
		return errors.Is(errs[len(errs)-1], ErrNotRegularFile)
	}, waitFor, tick, "errors: %v", r.errors())
}

// A missing member in a subdirectory of the set's
// directory is waited for there, not only by the re-check.
func TestASetsMissingMemberInASubdirectoryIsSeenWhenItComesBack(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(dir, "conf"), 0o755))
	write(t, filepath.Join(dir, "a.yaml"), "a: 1\n")
	s := Set(dir, []string{"a.yaml", "conf/b.yaml"}, yamlParser{}, WithErrorCallbacks(),
		WithRecheckInterval(0), WithLogger(testLogger(t)), WithWaitForPath())
	r := watchedSet(t, s)
	require.Eventually(t, func() bool { return len(r.errors()) > 0 }, waitFor, tick)
	replace(t, filepath.Join(dir, "conf", "b.yaml"), "b: 2\n")
	r.wait(t, func(m map[string]any) bool { return m["b"] == 2 })
	assert.Zero(t, s.Stats().Restarts)

	// And once there, its directory stays watched.
	replace(t, filepath.Join(dir, "conf", "b.yaml"), "b: 3\n")
	r.wait(t, func(m map[string]any) bool { return m["b"] == 3 })
}

// Sets and files share the process's one inotify instance, and a set has
// Stats like a file's.
func TestSetsShareTheInotifyInstanceAndHaveStats(t *testing.T) {
	before := countInotify(t)
	var sets []*FileSet
	for i := range 5 {
		dir := t.TempDir()
		write(t, filepath.Join(dir, "a.yaml"), fmt.Sprintf("a: %d\n", i))
		s := Set(dir, []string{"a.yaml"}, yamlParser{})
		watchedSet(t, s)
		sets = append(sets, s)
	}
	_, _ = watched(t, filepath.Join(t.TempDir(), "missing.yaml"), WithWaitForPath())
	assert.Equal(t, before+1, countInotify(t))
	st := sets[0].Stats()
	assert.Equal(t, ModeEvents, st.Mode)
	assert.NotEmpty(t, st.WatchedDirs)
}

// Where events cannot be had, a set is polled like a file.
func TestASetCanBePolled(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "a.yaml"), "a: 1\n")
	s := Set(dir, []string{"a.yaml"}, yamlParser{}, WithPolling(20*time.Millisecond), WithQuietWindow(10*time.Millisecond))
	r := watchedSet(t, s)
	assert.Equal(t, ModePolling, s.Stats().Mode)
	replace(t, filepath.Join(dir, "a.yaml"), "a: 2\n")
	r.wait(t, func(m map[string]any) bool { return m["a"] == 2 })
}

// A file of a set found empty (emptied to be written again: `: > f; echo
// ... >> f`, or caught between a writer's truncation and its write) is
// doubted as an empty file is: the set is not delivered with it empty
// unless it stays so for a window.
func TestASetWithAFileFoundEmptyIsConfirmedFirst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		a, b := filepath.Join(dir, "a.yaml"), filepath.Join(dir, "b.yaml")
		write(t, a, "a: 1\n")
		write(t, b, "b: 1\n")
		fs := &fakes{caps: decide.Caps{Closes: true}}
		s := Set(dir, []string{"a.yaml", "b.yaml"}, yamlParser{}, withNotifier(fs.new), withoutWriterProbe(),
			WithRecheckInterval(0), WithQuietWindow(testQuiet))
		r := watchedSet(t, s)
		synctest.Wait()
		n := fs.last()
		write(t, a, "") // emptied
		send(n, a, decide.OpWrite)
		send(n, a, decide.OpClose)
		advance(testQuiet + time.Millisecond) // the set's quiet window: a read, which finds a.yaml empty
		assert.Empty(t, r.snapshot(), "a set with a file found empty is not delivered at once")
		write(t, a, "a: 2\n") // and written again
		send(n, a, decide.OpWrite)
		send(n, a, decide.OpClose)
		advance(3 * testQuiet)
		m, _, _ := r.last()
		assert.Equal(t, map[string]any{"a": 2, "b": 1}, m)
		assert.Len(t, r.snapshot(), 1, "delivered once, whole")
	})
}
