package live_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"testing"

	"github.com/keepwatch/file/live"
	"github.com/knadh/koanf/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A config is named from the moment it is made: its Name, or else the
// paths it watches, as its records will name it once started. /readyz and
// the metrics tell which config has not started.
func TestAConfigIsNamedBeforeItStarts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "app.yaml")
	write(t, path, "port: 8080\n")
	f := provider(t, path)
	named := &live.Config{Name: "authz", Load: loadYAML(f), Watch: []live.Watcher{f}}
	unnamed := &live.Value[map[string]any]{Load: loadYAML(f), Watch: []live.Watcher{f}, IdentityKey: []byte("a key of sixteen bytes or more")}
	nothing := &live.Config{Load: func(*koanf.Koanf) error { return nil }}

	assert.Equal(t, "authz", named.Stats().Name)
	assert.Equal(t, path, unnamed.Stats().Name)
	assert.Equal(t, "live.Config", nothing.Stats().Name)
	assert.ErrorContains(t, named.Ready(), "keepwatch: config authz not ready")

	rec := httptest.NewRecorder()
	live.ReadyHandler(named, unnamed).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
	assert.Equal(t, http.StatusServiceUnavailable, rec.Code)
	assert.Equal(t, "waiting authz: no good config yet\nwaiting "+path+": no good config yet\n", rec.Body.String())
}

// A config without an identity says so once, once its first config is in
// force, at DEBUG: its replicas cannot be compared, which a single replica
// never needs. Stats tell it from the start (the
// metrics export it), and /readyz once a config is in force. A config
// with an IdentityKey, or PlainIdentity, says nothing.
func TestAConfigWithoutAnIdentityIsToldOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "app.yaml")
	write(t, path, "port: 8080\n")
	logs := &logRecords{}
	f := provider(t, path)
	c := &live.Config{Name: "app", Load: loadYAML(f), Watch: []live.Watcher{f}, Logger: logs.logger()}
	assert.False(t, c.Stats().Comparable, "known before Start")
	start(t, c)
	require.NoError(t, c.Reload())
	require.NoError(t, c.Reload())
	assert.Equal(t, []string{loaded, noIdentity, reloaded, reloaded}, logs.at(slog.LevelDebug), "at DEBUG, once")
	assert.Equal(t, map[string]string{"config": "app", "paths": "[" + path + "]"}, attrs(logs.records(slog.LevelDebug)[1]))
	st := c.Stats()
	assert.False(t, st.Comparable)
	assert.Empty(t, st.Identity)

	rec := httptest.NewRecorder()
	live.ReadyHandler(c).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
	assert.Regexp(t, `^ok      app: in force since \S+, no identity: replicas cannot be compared\n$`, rec.Body.String())

	for name, c := range map[string]*live.Config{
		"IdentityKey":   {Name: "keyed", Load: loadYAML(f), IdentityKey: []byte("a key of sixteen bytes or more"), Logger: logs.logger()},
		"PlainIdentity": {Name: "plain", Load: loadYAML(f), PlainIdentity: true, Logger: logs.logger()},
	} {
		assert.True(t, c.Stats().Comparable, name)
		start(t, c)
		assert.True(t, c.Stats().Comparable, name)
	}
	assert.Equal(t, []string{noIdentity}, slices.DeleteFunc(logs.at(slog.LevelDebug), func(r string) bool { return r != noIdentity }),
		"nothing more of identities")
}
