package config

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	file "github.com/keepwatch/file" // was: "github.com/knadh/koanf/providers/file"
	"github.com/knadh/koanf/parsers/json"
	"github.com/knadh/koanf/parsers/yaml"
	"github.com/knadh/koanf/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// Every watch a test starts is stopped by the test: none outlives it.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// keepwatch's providers are koanf v2's providers, and koanf v2's parsers
// are its Parsers (which ask only for Unmarshal, the one method keepwatch
// calls).
var (
	_ koanf.Provider = (*file.File)(nil)
	_ koanf.Provider = (*file.FileSet)(nil)
	_ file.Parser    = yaml.Parser()
	_ file.Parser    = json.Parser()
)

// save replaces path as editors and kubelet do: written aside, renamed over.
func save(t *testing.T, path, content string) {
	t.Helper()
	require.NoError(t, os.WriteFile(path+".tmp", []byte(content), 0o644))
	require.NoError(t, os.Rename(path+".tmp", path))
}

func TestTheConfigReloads(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	save(t, path, "greeting: hello\nshout: true\n")
	c, err := Load(path)
	require.NoError(t, err)

	changed := make(chan struct{}, 1)
	require.NoError(t, c.Watch(func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	}))
	t.Cleanup(func() { c.Stop() })

	save(t, path, "greeting: hello again\n")
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatal("no reload")
	}
	assert.Equal(t, map[string]any{"greeting": "hello again"}, c.Tree(), "shout removed")
}

// The service's start asks Watch whether the file is there (as
// lyrebirdaudio-go's TestWatchFailedToStart does).
func TestWatchFailsWhenTheFileIsGone(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "conf")
	require.NoError(t, os.Mkdir(dir, 0o755))
	path := filepath.Join(dir, "config.yaml")
	save(t, path, "greeting: hello\n")
	c, err := Load(path)
	require.NoError(t, err)
	require.NoError(t, os.RemoveAll(dir))

	err = c.Watch(func() {})
	require.ErrorIs(t, err, os.ErrNotExist)
	assert.True(t, os.IsNotExist(err), "%v", err)
}

func TestOverridesMergeInOrder(t *testing.T) {
	dir := t.TempDir()
	save(t, filepath.Join(dir, "10-base.json"), `{"log": "info", "db": {"host": "a", "port": 5432}}`)
	save(t, filepath.Join(dir, "20-site.json"), `{"db": {"host": "b"}}`)
	k, err := Overrides(dir)
	require.NoError(t, err)
	assert.Equal(t, "info", k.String("log"))
	assert.Equal(t, "b", k.String("db.host"))
	assert.Equal(t, 5432, k.Int("db.port"))
}
