package live_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/keepwatch/file"
	"github.com/keepwatch/file/live"
	"github.com/stretchr/testify/assert"
)

// mounted is a provider whose single file mounted on its own had its
// source replaced, as a keepwatch provider's Stats tell it.
type mounted struct{ source }

func (m *mounted) Stats() file.Stats {
	return file.Stats{Path: "/etc/app/config.yaml", SubPath: true, SourceReplaced: true}
}

// A config that watches a file whose mount's source was replaced says so
// in its Stats and its readiness probe's body, and stays ready: the config
// in force serves on.
func TestAReplacedSourceIsToldByStatsAndReadiness(t *testing.T) {
	m := &mounted{source{data: "a: 1\n"}}
	c := &live.Config{Name: "app", Load: loadYAML(m), Watch: []live.Watcher{m}, Logger: testLogger(t)}
	assert.Equal(t, []string{"/etc/app/config.yaml"}, c.Stats().SourceReplaced, "known before Start")
	start(t, c)
	assert.Equal(t, []string{"/etc/app/config.yaml"}, c.Stats().SourceReplaced)
	assert.NoError(t, c.Ready())

	rec := httptest.NewRecorder()
	live.ReadyHandler(c).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
	assert.Equal(t, http.StatusOK, rec.Code)
	assert.Regexp(t, `^ok      app: in force since \S+, no identity: replicas cannot be compared; `+
		`/etc/app/config\.yaml: its mount's source was replaced, its changes no longer arrive until a restart \(the log says more\)\n$`, rec.Body.String())

	js, err := c.Stats().MarshalJSON()
	assert.NoError(t, err)
	assert.Contains(t, string(js), `"SourceReplaced":["/etc/app/config.yaml"]`)
}
