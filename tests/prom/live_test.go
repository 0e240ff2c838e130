package prom_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/keepwatch/file"
	"github.com/keepwatch/file/keepwatchprom"
	"github.com/keepwatch/file/kubevol"
	"github.com/keepwatch/file/live"
	"github.com/knadh/koanf/parsers/yaml"
	"github.com/knadh/koanf/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const waitFor = 10 * time.Second

var key = []byte("a key the replicas share, from a Secret")

// series is a scrape, as "name{label=value,...}" to value, labels sorted.
type series map[string]float64

func scrape(t *testing.T, g prometheus.Gatherer) series {
	t.Helper()
	families, err := g.Gather()
	require.NoError(t, err)
	out := series{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			out[name(f.GetName(), m.GetLabel())] = value(f.GetType(), m)
		}
	}
	return out
}

func name(n string, labels []*dto.LabelPair) string {
	var parts []string
	for _, l := range labels {
		parts = append(parts, l.GetName()+"="+l.GetValue())
	}
	sort.Strings(parts)
	return n + "{" + strings.Join(parts, ",") + "}"
}

func value(typ dto.MetricType, m *dto.Metric) float64 {
	if typ == dto.MetricType_COUNTER {
		return m.GetCounter().GetValue()
	}
	return m.GetGauge().GetValue()
}

// service is a service with two live configs, as a program sets them up:
// app (a Value, one file of a ConfigMap volume) and authz (a Config, a
// Secret-like volume's two keys read as one set), both under the
// replicas' identity key, and the collector of both and their providers.
type service struct {
	app      *live.Value[*App]
	authz    *live.Config
	appVol   *kubevol.Volume
	authzVol *kubevol.Volume
	appFile  *file.File
	authzSet *file.FileSet
	reg      *prometheus.Registry
}

type App struct {
	Port int `koanf:"port"`
}

func newService(t *testing.T) *service {
	t.Helper()
	dir := t.TempDir()
	s := &service{reg: prometheus.NewRegistry()}
	var err error
	s.appVol, err = kubevol.New(filepath.Join(dir, "app"), map[string]string{"app.yaml": "port: 8080\n"})
	require.NoError(t, err)
	s.authzVol, err = kubevol.New(filepath.Join(dir, "authz"), map[string]string{
		"policy.yaml": "allow: [read]\n", "roles.yaml": "roles: {alice: [read]}\n"})
	require.NoError(t, err)

	s.appFile = file.Provider(filepath.Join(s.appVol.Dir, "app.yaml"))
	s.authzSet = file.Set(s.authzVol.Dir, []string{"policy.yaml", "roles.yaml"}, yaml.Parser())
	s.app = &live.Value[*App]{
		Name:  "app",
		Load:  func(k *koanf.Koanf) error { return k.Load(s.appFile, yaml.Parser()) },
		Watch: []live.Watcher{s.appFile},
		Validate: func(a *App) error {
			if a.Port <= 0 {
				return errors.New("port must be positive")
			}
			return nil
		},
		IdentityKey: key,
	}
	s.authz = &live.Config{
		Name:        "authz",
		Load:        func(k *koanf.Koanf) error { return k.Load(s.authzSet, nil) },
		Watch:       []live.Watcher{s.authzSet},
		IdentityKey: key,
	}
	require.NoError(t, s.app.Start())
	require.NoError(t, s.authz.Start())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitFor)
		defer cancel()
		require.NoError(t, s.app.Shutdown(ctx))
		require.NoError(t, s.authz.Shutdown(ctx))
	})

	c := keepwatchprom.NewCollector()
	c.AddConfig(s.app, s.authz)
	c.AddProvider(s.appFile, s.authzSet)
	s.reg.MustRegister(c)
	return s
}

// Every series of a service with two live configs and their providers,
// through start, a rejected push and a good one.
func TestAServiceWithTwoLiveConfigs(t *testing.T) {
	started := time.Now()
	s := newService(t)
	require.Eventually(t, func() bool {
		return !s.appFile.Stats().LastRead.IsZero() && !s.authzSet.Stats().LastRead.IsZero()
	}, waitFor, time.Millisecond, "each watch takes its first read")
	m := scrape(t, s.reg)
	for _, cfg := range []string{"app", "authz"} {
		l := "{config=" + cfg + "}"
		assert.Equal(t, 1.0, m["keepwatch_config_last_reload_successful"+l], cfg)
		assert.Equal(t, 1.0, m["keepwatch_config_reloads_total"+l], "Start counts as a reload: %s", cfg)
		assert.Equal(t, 0.0, m["keepwatch_config_reloads_failed_total"+l], cfg)
		assert.Equal(t, 1.0, m["keepwatch_config_comparable"+l], "an IdentityKey: %s", cfg)
		ts := m["keepwatch_config_last_reload_success_timestamp_seconds"+l]
		assert.InDelta(t, float64(started.UnixNano())/1e9, ts, 60, "a new pod's timestamp is its start: %s", cfg)
	}
	appID := s.app.Stats().Identity
	assert.Regexp(t, `^hmac-sha256:[0-9a-f]{64}$`, appID)
	assert.Equal(t, 1.0, m["keepwatch_config_info{config=app,identity="+appID+"}"])
	assert.Equal(t, 1.0, m["keepwatch_config_info{config=authz,identity="+s.authz.Stats().Identity+"}"])

	for _, p := range []string{s.appFile.Stats().Path, s.authzSet.Stats().Path} {
		l := "{path=" + p
		assert.Equal(t, 1.0, m["keepwatch_watch_mode{mode=events,path="+p+"}"], p)
		assert.Equal(t, 0.0, m["keepwatch_watch_mode{mode=polling,path="+p+"}"], p)
		assert.Equal(t, 0.0, m["keepwatch_watch_mode{mode=retrying,path="+p+"}"], p)
		assert.Equal(t, 0.0, m["keepwatch_watch_mode{mode=stopped,path="+p+"}"], p)
		assert.Equal(t, 0.0, m["keepwatch_watch_updates_total"+l+"}"], p)
		assert.Equal(t, 0.0, m["keepwatch_watch_errors_total"+l+"}"], p)
		assert.Equal(t, 0.0, m["keepwatch_watch_restarts_total"+l+"}"], p)
		assert.Equal(t, 0.0, m["keepwatch_watch_subpath_mount"+l+"}"], p)
		assert.Equal(t, 0.0, m["keepwatch_watch_mount_source_replaced"+l+"}"], p)
	}
	read := m["keepwatch_watch_last_read_timestamp_seconds{path="+s.appFile.Stats().Path+"}"]
	assert.InDelta(t, float64(started.UnixNano())/1e9, read, 60, "the watch's first read counts")
	assert.GreaterOrEqual(t, m["keepwatch_watch_last_check_timestamp_seconds{path="+s.appFile.Stats().Path+"}"], read,
		"a read is a check")
	assert.Len(t, m, 2*6+2*(3+4+4), "nothing else: %v", m)

	// A bad push: the reload fails, the identity stays that of the config
	// in force.
	_, err := s.appVol.Update(map[string]string{"app.yaml": "port: 0\n"})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return s.app.Stats().Rejected == 1 }, waitFor, time.Millisecond)
	m = scrape(t, s.reg)
	assert.Equal(t, 0.0, m["keepwatch_config_last_reload_successful{config=app}"])
	assert.Equal(t, 2.0, m["keepwatch_config_reloads_total{config=app}"])
	assert.Equal(t, 1.0, m["keepwatch_config_reloads_failed_total{config=app}"])
	assert.Equal(t, 1.0, m["keepwatch_config_info{config=app,identity="+appID+"}"])
	assert.Equal(t, 1.0, m["keepwatch_watch_updates_total{path="+s.appFile.Stats().Path+"}"], "the provider delivered it")

	_, err = s.appVol.Update(map[string]string{"app.yaml": "port: 9090\n"})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return s.app.Get().Port == 9090 }, waitFor, time.Millisecond)
	m = scrape(t, s.reg)
	assert.Equal(t, 1.0, m["keepwatch_config_last_reload_successful{config=app}"])
	assert.Equal(t, 3.0, m["keepwatch_config_reloads_total{config=app}"])
	assert.Equal(t, 1.0, m["keepwatch_config_reloads_failed_total{config=app}"])
	assert.NotContains(t, m, "keepwatch_config_info{config=app,identity="+appID+"}", "another config, another identity")
	assert.Contains(t, m, "keepwatch_config_info{config=app,identity="+s.app.Stats().Identity+"}")
}

// The names follow Prometheus's conventions, as promlint checks them.
func TestTheMetricsPassPromlint(t *testing.T) {
	s := newService(t)
	problems, err := testutil.GatherAndLint(s.reg)
	require.NoError(t, err)
	assert.Empty(t, problems)
}

// A config not started yet, or waiting for its first good config, is
// exported under its name: not successful, with no timestamp and no
// identity, and no reload, however long it waits.
func TestAConfigWaitingForItsFirstGoodConfig(t *testing.T) {
	path := filepath.Join(t.TempDir(), "app.yaml")
	f := file.Provider(path)
	c := &live.Config{Name: "late", Load: func(k *koanf.Koanf) error { return k.Load(f, yaml.Parser()) },
		Watch: []live.Watcher{f}, IdentityKey: key}
	col := keepwatchprom.NewCollector()
	col.AddConfig(c)
	reg := prometheus.NewRegistry()
	reg.MustRegister(col)
	waiting := series{
		"keepwatch_config_last_reload_successful{config=late}": 0,
		"keepwatch_config_reloads_total{config=late}":          0,
		"keepwatch_config_reloads_failed_total{config=late}":   0,
		"keepwatch_config_comparable{config=late}":             1,
	}
	assert.Equal(t, waiting, scrape(t, reg), "not started")

	done := make(chan error, 1)
	go func() { done <- c.StartWait(context.Background()) }()
	require.Eventually(t, func() bool { return c.Stats().LastError != nil }, waitFor, time.Millisecond)
	assert.Equal(t, waiting, scrape(t, reg), "waiting")

	require.NoError(t, os.WriteFile(path, []byte("a: 1\n"), 0o644))
	require.NoError(t, <-done)
	t.Cleanup(func() { require.NoError(t, c.Shutdown(context.Background())) })
	m := scrape(t, reg)
	assert.Equal(t, 1.0, m["keepwatch_config_last_reload_successful{config=late}"])
	assert.Equal(t, 1.0, m["keepwatch_config_reloads_total{config=late}"])
	assert.Contains(t, m, "keepwatch_config_last_reload_success_timestamp_seconds{config=late}")
}

// Two configs of one name would be two series alike: the scrape fails,
// naming them.
func TestTwoConfigsOfOneNameFailTheScrape(t *testing.T) {
	load := func(k *koanf.Koanf) error { return nil }
	a := &live.Config{Name: "app", Load: load}
	b := &live.Config{Name: "app", Load: load}
	require.NoError(t, a.Start())
	require.NoError(t, b.Start())
	col := keepwatchprom.NewCollector()
	col.AddConfig(a, b, a)
	reg := prometheus.NewRegistry()
	reg.MustRegister(col)
	_, err := reg.Gather()
	require.Error(t, err)
	assert.Contains(t, err.Error(), `keepwatchprom: two live configs named "app": give each its own Name`)
}
