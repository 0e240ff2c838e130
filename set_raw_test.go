package file

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rawRecorder records a FileSet's callbacks, reading the set's files
// unparsed inside each, as a TLS or token reloader would.
type rawRecorder struct {
	s     *FileSet
	mu    sync.Mutex
	reads []map[string]string
	evs   []SetEvent
	errs  []error
}

func (r *rawRecorder) cb(event any, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		r.errs = append(r.errs, err)
		return
	}
	files, rerr := r.s.ReadFiles()
	if rerr != nil {
		r.errs = append(r.errs, fmt.Errorf("ReadFiles in callback: %w", rerr))
		return
	}
	r.reads = append(r.reads, text(files))
	r.evs = append(r.evs, event.(SetEvent))
}

func (r *rawRecorder) snapshot() ([]map[string]string, []SetEvent, []error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]map[string]string(nil), r.reads...), append([]SetEvent(nil), r.evs...), append([]error(nil), r.errs...)
}

// wait waits until the last read satisfies ok, and returns it.
func (r *rawRecorder) wait(t *testing.T, ok func(m map[string]string) bool) map[string]string {
	t.Helper()
	var last map[string]string
	require.Eventually(t, func() bool {
		reads, _, _ := r.snapshot()
		if len(reads) == 0 {
			return false
		}
		last = reads[len(reads)-1]
		return ok(last)
	}, waitFor, tick, "reads: %v", r)
	return last
}

func (r *rawRecorder) String() string {
	reads, _, errs := r.snapshot()
	return fmt.Sprintf("%v, errors: %v", reads, errs)
}

func watchedRaw(t *testing.T, s *FileSet) *rawRecorder {
	t.Helper()
	_, _ = s.ReadFiles()
	r := &rawRecorder{s: s}
	require.NoError(t, s.Watch(r.cb))
	t.Cleanup(func() {
		ctx, cancel := contextFor(waitFor)
		defer cancel()
		require.NoError(t, s.Shutdown(ctx))
	})
	return r
}

func text(files map[string][]byte) map[string]string {
	out := make(map[string]string, len(files))
	for name, data := range files {
		out[name] = string(data)
	}
	return out
}

// A set read raw needs no parser, and gives each file's bytes by name; the
// bytes are the caller's own: changing them changes no later read.
func TestReadFilesGivesEachFileAsItIs(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "tls.crt"), "-----BEGIN CERTIFICATE-----\n")
	write(t, filepath.Join(dir, "token"), "")
	s := Set(dir, []string{"tls.crt", "token"}, nil)
	files, err := s.ReadFiles()
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"tls.crt": "-----BEGIN CERTIFICATE-----\n", "token": ""}, text(files))

	files["tls.crt"][0] = 'X'
	again, err := s.ReadFiles()
	require.NoError(t, err)
	assert.Equal(t, "-----BEGIN CERTIFICATE-----\n", string(again["tls.crt"]))

	_, err = Set(dir, []string{"tls.crt", "tls.key"}, nil).ReadFiles()
	assert.ErrorIs(t, err, os.ErrNotExist, "a missing member fails the read, as Read's")
	assert.ErrorContains(t, err, "tls.key")
}

// Dir is every key of a mounted Secret, whatever keys it has: a dotted
// one too, and none of kubelet's own entries.
func TestADirSetIsEveryKeyOfAMount(t *testing.T) {
	v := newVolume(t, filepath.Join(t.TempDir(), "pull"), map[string]string{
		".dockerconfigjson": "{}", "tls.crt": "crt", "tls.key": "key",
	})
	files, err := Dir(v.v.Dir, nil).ReadFiles()
	require.NoError(t, err)
	assert.Equal(t, map[string]string{".dockerconfigjson": "{}", "tls.crt": "crt", "tls.key": "key"}, text(files))

	// A plain directory: subdirectories too, named by their path.
	dir := t.TempDir()
	write(t, filepath.Join(dir, "a"), "a")
	require.NoError(t, os.Mkdir(filepath.Join(dir, "g"), 0o755))
	write(t, filepath.Join(dir, "g", "h"), "h")
	files, err = Dir(dir, nil).ReadFiles()
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"a": "a", filepath.Join("g", "h"): "h"}, text(files))

	files, err = Dir(t.TempDir(), nil).ReadFiles()
	require.NoError(t, err)
	assert.Empty(t, files, "an empty directory is an empty set")
	_, err = Dir(filepath.Join(dir, "missing"), nil).ReadFiles()
	assert.ErrorIs(t, err, os.ErrNotExist)
}

// Read raw in the callback, the files of a kubelet volume are one
// generation, however fast the updates come: a certificate never meets
// another generation's key; and the last update is what is delivered.
func TestFilesReadRawInTheCallbackAreOneGeneration(t *testing.T) {
	t.Parallel() // its own volume; it judges content, not time
	payload := func(n int) map[string]string {
		return map[string]string{"ca.crt": fmt.Sprint("ca ", n), "tls.crt": fmt.Sprint("crt ", n), "tls.key": fmt.Sprint("key ", n)}
	}
	v := newVolume(t, filepath.Join(t.TempDir(), "tls"), payload(0))
	s := Dir(v.v.Dir, nil)
	r := watchedRaw(t, s)
	const updates = 100
	for i := 1; i <= updates; i++ {
		v.update(payload(i))
	}
	r.wait(t, func(m map[string]string) bool { return m["tls.key"] == fmt.Sprint("key ", updates) })
	reads, evs, errs := r.snapshot()
	for i, m := range reads {
		var n int
		_, err := fmt.Sscanf(m["tls.crt"], "crt %d", &n)
		require.NoError(t, err)
		require.Equal(t, payload(n), m, "delivery %d mixes generations", i)
		require.Equal(t, []string{"ca.crt", "tls.crt", "tls.key"}, evs[i].Files)
	}
	assert.Empty(t, errs)
}

// A key added to or dropped from a mounted ConfigMap is a change of a Dir
// set, delivered once.
func TestADirSetFollowsKeysComingAndGoing(t *testing.T) {
	v := newVolume(t, filepath.Join(t.TempDir(), "cm"), map[string]string{"a": "1"})
	r := watchedRaw(t, Dir(v.v.Dir, nil))
	v.update(map[string]string{"a": "1", "b": "2"})
	r.wait(t, func(m map[string]string) bool { return m["b"] == "2" })
	v.update(map[string]string{"b": "2"})
	r.wait(t, func(m map[string]string) bool { _, a := m["a"]; return !a })
	reads, evs, errs := r.snapshot()
	assert.Equal(t, []map[string]string{{"a": "1", "b": "2"}, {"b": "2"}}, reads, "one delivery per update")
	assert.Equal(t, []string{"b"}, evs[1].Files)
	assert.NotEmpty(t, evs[1].Generation)
	assert.Empty(t, errs)
}

// In a plain directory, a Dir set sees a file of a subdirectory rewritten,
// and a file appear at the top.
func TestADirSetInAPlainDirectory(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(dir, "g"), 0o755))
	write(t, filepath.Join(dir, "g", "h"), "1")
	r := watchedRaw(t, Dir(dir, nil, WithQuietWindow(20*time.Millisecond)))
	replace(t, filepath.Join(dir, "g", "h"), "2")
	r.wait(t, func(m map[string]string) bool { return m[filepath.Join("g", "h")] == "2" })
	replace(t, filepath.Join(dir, "top"), "3")
	m := r.wait(t, func(m map[string]string) bool { return m["top"] == "3" })
	assert.Equal(t, map[string]string{filepath.Join("g", "h"): "2", "top": "3"}, m)
}

// A set that lists its files (a glob, a tree) in a kubelet volume is never
// read cut short: kubelet removing the generation being listed, after a
// swap, would list fewer files without an error.
func TestAListedSetIsNeverReadCutShort(t *testing.T) {
	t.Parallel() // its own volume; it judges content, not time
	payload := func(n int) map[string]string {
		return map[string]string{"a.pem": fmt.Sprint(n), "b.pem": fmt.Sprint(n), "c.pem": fmt.Sprint(n)}
	}
	v := newVolume(t, filepath.Join(t.TempDir(), "certs"), payload(0))
	sets := []*FileSet{Glob(filepath.Join(v.v.Dir, "*.pem"), nil), Dir(v.v.Dir, nil)}
	done := make(chan struct{})
	var wg sync.WaitGroup
	for _, s := range sets {
		wg.Go(func() {
			for reads := 0; ; reads++ {
				select {
				case <-done:
					return
				default:
				}
				files, err := s.ReadFiles()
				if err != nil {
					t.Errorf("read %d of %s: %v", reads, s.Stats().Path, err)
					return
				}
				m := text(files)
				if n := m["a.pem"]; len(m) != 3 || m["b.pem"] != n || m["c.pem"] != n {
					t.Errorf("read %d of %s is cut short or mixed: %v", reads, s.Stats().Path, m)
					return
				}
			}
		})
	}
	for i := 1; i <= 100; i++ {
		v.update(payload(i))
	}
	close(done)
	wg.Wait()
}
