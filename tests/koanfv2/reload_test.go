package config

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/keepwatch/file"
	"github.com/knadh/koanf/parsers/yaml"
	"github.com/knadh/koanf/v2"
	"github.com/stretchr/testify/require"
)

// The goleak-clean test of docs/semantics.md ("Tests"), as it is there:
// keepwatch's watch never ends on its own, not even when the test's
// directory goes, so a test ends it, here with its context.
func TestReloadEndsWithTheTest(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(path, []byte("level: info\n"), 0o644))
	f := file.Provider(path)
	k := koanf.New(".")
	require.NoError(t, k.Load(f, yaml.Parser()))

	reloaded := make(chan *koanf.Koanf, 1)
	// Done as the test returns, before its cleanups remove the directory.
	require.NoError(t, f.WatchWithContext(t.Context(), func(_ any, err error) {
		nk := koanf.New(".")
		if err != nil || nk.Load(f, yaml.Parser()) != nil {
			return
		}
		select { // never block the watch on a test that has moved on
		case reloaded <- nk:
		default:
		}
	}))

	require.NoError(t, os.WriteFile(path, []byte("level: debug\n"), 0o644))
	select {
	case nk := <-reloaded:
		require.Equal(t, "debug", nk.String("level"))
	case <-time.After(10 * time.Second):
		t.Fatal("not reloaded")
	}
}
