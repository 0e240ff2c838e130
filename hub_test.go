package file

import (
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/fsnotify/fsnotify"
	"github.com/keepwatch/file/internal/events"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The shared watcher (internal/events) as providers use it, end to end;
// its own tests are in its package. Tests that use a test hub run in a
// synctest bubble, and never touch the process hub: a hub's goroutines
// belong to the bubble they start in.

// hubFiles is how many providers TestManyProvidersShareOneInotifyInstance
// runs: make test runs 2,000 (10,000 cost ten seconds under the race
// detector); make soak runs 10,000.
var hubFiles = flag.Int("hub.files", 2000, "providers for TestManyProvidersShareOneInotifyInstance, a multiple of 100")

func TestManyProvidersShareOneInotifyInstance(t *testing.T) {
	before := countInotify(t)
	root := t.TempDir()
	dirs, perDir := *hubFiles/100, 100 // 100 files to a directory
	quiet := slog.New(slog.DiscardHandler)
	var files []*File
	var recs []*recorder
	var paths []string
	for d := range dirs {
		dir := filepath.Join(root, fmt.Sprintf("d%03d", d))
		require.NoError(t, os.Mkdir(dir, 0o755))
		for i := range perDir {
			paths = append(paths, filepath.Join(dir, fmt.Sprintf("f%03d.yaml", i)))
			write(t, paths[len(paths)-1], "v1\n")
		}
	}
	for _, path := range paths {
		f := Provider(path, WithLogger(quiet))
		_, err := f.ReadBytes()
		require.NoError(t, err)
		r := newRecorder(f)
		require.NoError(t, f.Watch(r.cb))
		files, recs = append(files, f), append(recs, r)
	}
	defer func() {
		for _, f := range files {
			shutdown(t, f)
		}
		assert.Equal(t, before, countInotify(t), "the last watch's end closes the instance")
	}()
	assert.Equal(t, before+1, countInotify(t), "one inotify instance for %d providers", len(files))

	// They all work: change one file in every directory, and each of those
	// is delivered, to its own provider only.
	for d := range dirs {
		i := d*perDir + d%perDir
		replace(t, files[i].t.path, fmt.Sprintf("v2 of %d\n", i))
	}
	for d := range dirs {
		i := d*perDir + d%perDir
		recs[i].waitContent(t, fmt.Sprintf("v2 of %d\n", i))
	}
	for i, r := range recs {
		if i%perDir != (i/perDir)%perDir {
			require.Empty(t, r.calls(), "provider %d fired for another file", i)
		}
	}
}

func TestAHubFaultReArmsItOnceAndEveryProviderReReads(t *testing.T) {
	for _, fault := range []struct {
		name   string
		inject func(b *fakeBackend)
	}{
		{"error", func(b *fakeBackend) { b.fail(os.ErrInvalid) }},
		{"overflow reported as an error", func(b *fakeBackend) { b.fail(fsnotify.ErrEventOverflow) }},
		{"events closed", func(b *fakeBackend) { b.fail(events.ErrEventsClosed) }},
	} {
		t.Run(fault.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				raw := &fakeBackends{}
				h := events.NewHub(raw.newBackend)
				var paths []string
				var recs []*recorder
				for _, d := range []string{t.TempDir(), t.TempDir()} {
					for i := range 3 {
						path := filepath.Join(d, fmt.Sprintf("c%d.yaml", i))
						write(t, path, "v1\n")
						_, r := watched(t, path, withNotifier(h.Subscribe),
							withBackoff(testBackoffMin, testBackoffMax), WithRecheckInterval(0))
						paths, recs = append(paths, path), append(recs, r)
					}
				}
				synctest.Wait()
				require.Equal(t, 1, raw.calls())
				assert.Len(t, raw.last().watched(), 2)

				for _, p := range paths {
					write(t, p, "v2 of "+p+"\n") // lost with the fault
				}
				fault.inject(raw.last())
				synctest.Wait()
				for _, r := range recs {
					require.Len(t, r.errs(), 1)
					assert.ErrorIs(t, r.errs()[0], ErrWatchInterrupted)
				}

				advance(testBackoffMin)
				assert.Equal(t, 2, raw.calls(), "one new watcher for all six")
				assert.Len(t, raw.last().watched(), 2)
				for i, r := range recs {
					assert.Equal(t, []string{"v2 of " + paths[i] + "\n"}, r.contents())
				}
			})
		})
	}
}

// A provider stuck in a slow callback holds up nobody else sharing the hub,
// and when it is released it rescans and delivers the final content.
func TestASlowCallbackDelaysOnlyItsOwnProvider(t *testing.T) {
	dir := t.TempDir()
	slowPath, fastPath := filepath.Join(dir, "slow.yaml"), filepath.Join(dir, "fast.yaml")
	write(t, slowPath, "s0\n")
	write(t, fastPath, "f0\n")

	slow := Provider(slowPath, WithLogger(testLogger(t)))
	_, _ = slow.ReadBytes()
	var got atomic.Value
	var first atomic.Bool
	g := newGate(t)
	require.NoError(t, slow.Watch(func(_ any, err error) {
		if err != nil {
			return
		}
		if first.CompareAndSwap(false, true) {
			g.pass()
		}
		b, _ := slow.ReadBytes()
		got.Store(string(b))
	}))
	t.Cleanup(func() { g.release(); shutdown(t, slow) })
	_, fast := watched(t, fastPath)

	replace(t, slowPath, "s1\n")
	g.reached(t)
	for i := range 10 * events.SubscriptionBuffer {
		replace(t, slowPath, fmt.Sprintf("s%d\n", i+2))
		if i%events.SubscriptionBuffer == 0 {
			want := fmt.Sprintf("f%d\n", i+1)
			replace(t, fastPath, want)
			fast.waitContent(t, want)
		}
	}
	g.release()
	want := fmt.Sprintf("s%d\n", 10*events.SubscriptionBuffer+1)
	require.Eventually(t, func() bool { v, _ := got.Load().(string); return v == want }, waitFor, tick)
}

// The fsnotify backend, which providers use off Linux, carries the basics
// through the hub: a rename-over save, an in-place write after the quiet
// window, a kubelet update, a file removed and back.
func TestTheFsnotifyBackendCarriesTheBasics(t *testing.T) {
	h := events.NewHub(events.NewFsnotifyBackend)
	v := newVolume(t, filepath.Join(t.TempDir(), "config"), config(0))
	_, rv := watched(t, v.path("config.yaml"), withNotifier(h.Subscribe), WithRecheckInterval(0))
	path := filepath.Join(t.TempDir(), "plain.yaml")
	write(t, path, "v1\n")
	_, rp := watched(t, path, withNotifier(h.Subscribe), WithRecheckInterval(0))

	replace(t, path, "v2\n")
	rp.waitContent(t, "v2\n")
	write(t, path, "v3\n")
	rp.waitContent(t, "v3\n")
	require.NoError(t, os.Remove(path))
	rp.waitErr(t, os.ErrNotExist)
	write(t, path, "v4\n")
	rp.waitContent(t, "v4\n")

	for i := 1; i <= 3; i++ {
		v.update(config(i))
		rv.waitContent(t, config(i)["config.yaml"])
	}
}
