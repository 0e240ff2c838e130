package koanf_test

import (
	"path/filepath"
	"sync"
	"testing"

	"github.com/fsnotify/fsnotify"
	"github.com/keepwatch/file"
	"github.com/knadh/koanf/parsers/json"
	"github.com/knadh/koanf/parsers/yaml"
	"github.com/knadh/koanf/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The library's providers are koanf's providers, and koanf's parsers are
// its Parsers (which ask only for Unmarshal), with no conversion: the root
// package imports no koanf module, so this is checked here, against koanf
// v2 (tests/koanfv1 checks v1).
var (
	_ koanf.Provider = (*file.File)(nil)
	_ koanf.Provider = (*file.FileSet)(nil)
	_ file.Parser    = yaml.Parser()
	_ file.Parser    = json.Parser()
)

// The reload pattern of koanf's README, unchanged, with a real koanf.
func TestKoanfReloadPattern(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	write(t, path, "service:\n  port: 8080\n")

	var mu sync.Mutex
	k := koanf.New(".")
	f := file.Provider(path, file.WithLogger(testLogger(t)))
	require.NoError(t, k.Load(f, yaml.Parser()))
	require.Equal(t, 8080, k.Int("service.port"))

	var events []fsnotify.Event
	require.NoError(t, f.Watch(func(event any, err error) {
		if !assert.NoError(t, err) {
			return
		}
		events = append(events, event.(fsnotify.Event))
		nk := koanf.New(".")
		if err := nk.Load(f, yaml.Parser()); err != nil {
			t.Errorf("reload: %v", err)
			return
		}
		mu.Lock()
		k = nk
		mu.Unlock()
	}))
	defer shutdown(t, f)

	replace(t, path, "service:\n  port: 9090\n")
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return k.Int("service.port") == 9090
	}, waitFor, tick)

	shutdown(t, f)
	require.Len(t, events, 1)
	assert.Equal(t, fsnotify.Event{Name: path, Op: fsnotify.Write}, events[0])
}

// k.Load(set, nil) loads the set's files merged in order, later over
// earlier.
func TestASetLoadsIntoKoanf(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "base.yaml"), "a: 1\nb: {x: 1, y: 1}\n")
	write(t, filepath.Join(dir, "override.yaml"), "b: {y: 2}\nc: 3\n")
	k := koanf.New(".")
	require.NoError(t, k.Load(file.Set(dir, []string{"base.yaml", "override.yaml"}, yaml.Parser()), nil))
	assert.Equal(t, map[string]any{"a": 1, "b": map[string]any{"x": 1, "y": 2}, "c": 3}, k.Raw())
}

// k.Load(set, yaml.Parser()), the habit from single files, makes koanf ask
// the set for bytes; the error names the call that works. A set made
// without a parser says where the parser goes.
func TestLoadingASetWithAParserNamesTheRightCall(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "base.yaml"), "a: 1\n")
	set := file.Set(dir, []string{"base.yaml"}, yaml.Parser())

	k := koanf.New(".")
	err := k.Load(set, yaml.Parser())
	assert.EqualError(t, err, "keepwatch: a file set has no single content: load it with k.Load(set, nil)")
	assert.Empty(t, k.Raw(), "nothing loaded")

	require.NoError(t, k.Load(set, nil), "the call the error names")
	assert.Equal(t, 1, k.Int("a"))

	err = koanf.New(".").Load(file.Set(dir, []string{"base.yaml"}, nil), nil)
	assert.EqualError(t, err, "read "+dir+": keepwatch: a file set needs a parser: give one to Set or Glob")
}
