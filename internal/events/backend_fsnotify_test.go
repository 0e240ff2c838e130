package events

import (
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/keepwatch/file/internal/decide"

	"github.com/stretchr/testify/require"
)

// selfRemovals records the watches told of their own removal.
type selfRemovals struct {
	mu  sync.Mutex
	ids map[int]bool
}

func (s *selfRemovals) Events(batch []RawEvent) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ev := range batch {
		if ev.Name == "" && ev.Op&decide.OpRemove != 0 {
			s.ids[ev.ID] = true
		}
	}
	return true
}

func (s *selfRemovals) Failed(error) {}

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
	b, err := NewFsnotifyBackend(s)
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
