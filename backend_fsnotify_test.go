package file

import (
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/keepwatch/file/internal/decide"

	"github.com/stretchr/testify/require"
)

// The fsnotify backend, which providers use off Linux, carries the basics
// through the hub: a rename-over save, an in-place write after the quiet
// window, a kubelet update, a file removed and back.
func TestTheFsnotifyBackendCarriesTheBasics(t *testing.T) {
	h := newHub(newFsnotifyBackend)
	v := newVolume(t, filepath.Join(t.TempDir(), "config"), config(0))
	_, rv := watched(t, v.path("config.yaml"), withNotifier(h.subscribe), WithRecheckInterval(0))
	path := filepath.Join(t.TempDir(), "plain.yaml")
	write(t, path, "v1\n")
	_, rp := watched(t, path, withNotifier(h.subscribe), WithRecheckInterval(0))

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

// selfRemovals records the watches told of their own removal.
type selfRemovals struct {
	mu  sync.Mutex
	ids map[int]bool
}

func (s *selfRemovals) events(batch []rawEvent) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ev := range batch {
		if ev.name == "" && ev.op&decide.OpRemove != 0 {
			s.ids[ev.id] = true
		}
	}
	return true
}

func (s *selfRemovals) failed(error) {}

func (s *selfRemovals) told(id int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ids[id]
}

// On Linux fsnotify drops a watched directory's own deletion when its
// parent is watched too, leaving it to the parent's event; a parent
// watched only since the deletion has none to tell. The backend's Add of
// the parent tells it, however the race between the two goes.
func TestADirectoryDeletedJustBeforeItsParentIsWatchedIsToldGone(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("fsnotify drops the deletion on Linux only")
	}
	s := &selfRemovals{ids: map[int]bool{}}
	b, err := newFsnotifyBackend(s)
	require.NoError(t, err)
	defer b.Close()
	for round := range 50 {
		parent := t.TempDir()
		child := filepath.Join(parent, "c")
		require.NoError(t, os.Mkdir(child, 0o755))
		id, err := b.Add(child, reportAll)
		require.NoError(t, err)
		require.NoError(t, os.Remove(child))
		pid, err := b.Add(parent, reportAll)
		require.NoError(t, err)
		require.Eventually(t, func() bool { return s.told(id) }, waitFor, tick, "round %d: the deletion was never told", round)
		b.Remove(id)
		b.Remove(pid)
	}
}
