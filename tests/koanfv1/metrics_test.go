package config

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The watch's series, through a reload: keepwatchprom in a koanf v1
// service.
func TestTheWatchIsExported(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	save(t, path, "greeting: hello\n")
	c, err := Load(path)
	require.NoError(t, err)
	reg := prometheus.NewRegistry()
	reg.MustRegister(c.Metrics())
	changed := make(chan struct{}, 1)
	require.NoError(t, c.Watch(func() { changed <- struct{}{} }))
	t.Cleanup(func() { c.Stop() })

	assert.Equal(t, 1.0, gauge(t, reg, "keepwatch_watch_mode", "events"))
	save(t, path, "greeting: hello again\n")
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatal("no reload")
	}
	assert.Equal(t, 1.0, gauge(t, reg, "keepwatch_watch_updates_total", ""))
}

// gauge returns the value of the series name (of the mode label mode, if
// not ""), a gauge's or a counter's.
func gauge(t *testing.T, g prometheus.Gatherer, name, mode string) float64 {
	t.Helper()
	families, err := g.Gather()
	require.NoError(t, err)
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "mode" && l.GetValue() != mode {
					goto next
				}
			}
			if m.GetCounter() != nil {
				return m.GetCounter().GetValue()
			}
			return m.GetGauge().GetValue()
		next:
		}
	}
	t.Fatalf("no series %s", name)
	return 0
}
