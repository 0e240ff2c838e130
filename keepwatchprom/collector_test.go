package keepwatchprom_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"log/slog"
	"math/big"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/keepwatch/file"
	"github.com/keepwatch/file/keepwatchprom"
	"github.com/keepwatch/file/kubevol"
	"github.com/keepwatch/file/livestats"
	"github.com/keepwatch/file/tlscert"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// The collector's tests with live configs are in tests/prom, a module of
// their own: this one requires no koanf module, even for its tests.

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const waitFor = 10 * time.Second

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

func registry(c *keepwatchprom.Collector) *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	return reg
}

// stats is a provider as the collector sees it, in a state a test sets.
type stats file.Stats

func (s stats) Stats() file.Stats { return file.Stats(s) }

// config is a live config as the collector sees it, in a state a test
// sets.
type config livestats.Stats

func (c *config) Stats() livestats.Stats { return livestats.Stats(*c) }

// Polling, a single file mounted on its own, one whose source was
// replaced, and a watch that never read: as the alerts expect them.
func TestProviderStates(t *testing.T) {
	col := keepwatchprom.NewCollector()
	col.AddProvider(stats{Path: "/nfs/app.yaml", Mode: file.ModePolling, Restarts: 1},
		stats{Path: "/etc/app/config.yaml", Mode: file.ModeEvents, SubPath: true, Errors: 1},
		stats{Path: "/etc/app/replaced.yaml", Mode: file.ModeEvents, SubPath: true, SourceReplaced: true, Errors: 2})
	m := scrape(t, registry(col))
	assert.Equal(t, 1.0, m["keepwatch_watch_mode{mode=polling,path=/nfs/app.yaml}"])
	assert.Equal(t, 0.0, m["keepwatch_watch_mode{mode=events,path=/nfs/app.yaml}"])
	assert.Equal(t, 1.0, m["keepwatch_watch_restarts_total{path=/nfs/app.yaml}"])
	assert.Equal(t, 1.0, m["keepwatch_watch_subpath_mount{path=/etc/app/config.yaml}"])
	assert.Equal(t, 0.0, m["keepwatch_watch_mount_source_replaced{path=/etc/app/config.yaml}"])
	assert.Equal(t, 1.0, m["keepwatch_watch_mount_source_replaced{path=/etc/app/replaced.yaml}"])
	assert.Equal(t, 0.0, m["keepwatch_watch_mount_source_replaced{path=/nfs/app.yaml}"])
	assert.Equal(t, 1.0, m["keepwatch_watch_errors_total{path=/etc/app/config.yaml}"])
	assert.NotContains(t, m, "keepwatch_watch_last_read_timestamp_seconds{path=/nfs/app.yaml}", "never read: no timestamp, rather than 1970")
	assert.NotContains(t, m, "keepwatch_watch_last_check_timestamp_seconds{path=/nfs/app.yaml}", "never checked")
}

// A config is exported under its name from the moment it is added: one
// that has not published a config yet is not successful and has no
// timestamp. keepwatch_config_comparable tells the configs that have an
// identity from those that have none (no keepwatch_config_info ever).
func TestConfigStates(t *testing.T) {
	published := time.Unix(1_795_000_000, 0)
	col := keepwatchprom.NewCollector()
	col.AddConfig(
		&config{Name: "waiting", Comparable: true},
		&config{Name: "keyed", Comparable: true, Published: 2, Rejected: 1, LastSucceeded: true, LastPublished: published, Identity: "hmac-sha256:abcd"},
		&config{Name: "plain", Published: 1, LastSucceeded: true, LastPublished: published},
		&config{}, // unnamed: not a live config's; left out
	)
	assert.Equal(t, series{
		"keepwatch_config_comparable{config=waiting}":                          1,
		"keepwatch_config_last_reload_successful{config=waiting}":              0,
		"keepwatch_config_reloads_total{config=waiting}":                       0,
		"keepwatch_config_reloads_failed_total{config=waiting}":                0,
		"keepwatch_config_comparable{config=keyed}":                            1,
		"keepwatch_config_info{config=keyed,identity=hmac-sha256:abcd}":        1,
		"keepwatch_config_last_reload_successful{config=keyed}":                1,
		"keepwatch_config_last_reload_success_timestamp_seconds{config=keyed}": 1_795_000_000,
		"keepwatch_config_reloads_total{config=keyed}":                         3,
		"keepwatch_config_reloads_failed_total{config=keyed}":                  1,
		"keepwatch_config_comparable{config=plain}":                            0,
		"keepwatch_config_last_reload_successful{config=plain}":                1,
		"keepwatch_config_last_reload_success_timestamp_seconds{config=plain}": 1_795_000_000,
		"keepwatch_config_reloads_total{config=plain}":                         1,
		"keepwatch_config_reloads_failed_total{config=plain}":                  0,
	}, scrape(t, registry(col)))
}

// Two configs of one name would be two series alike: the scrape fails,
// naming them. One added twice is one.
func TestTwoConfigsOfOneNameFailTheScrape(t *testing.T) {
	a, b := &config{Name: "app"}, &config{Name: "app"}
	col := keepwatchprom.NewCollector()
	col.AddConfig(a, a)
	_, err := registry(col).Gather()
	require.NoError(t, err, "one config added twice")
	col.AddConfig(b)
	_, err = registry(col).Gather()
	require.Error(t, err)
	assert.Contains(t, err.Error(), `keepwatchprom: two live configs named "app": give each its own Name`)
}

// A TLS certificate from a Secret's volume: its rotations, a refused one
// (a key that is not the certificate's) and the next good one, the expiry
// of the certificate in force, and the watch of its files.
func TestATLSWatcher(t *testing.T) {
	first := issue(t, "v1", time.Now().Add(90*24*time.Hour))
	v, err := kubevol.New(filepath.Join(t.TempDir(), "tls"), first.secret())
	require.NoError(t, err)
	certs, err := tlscert.New(v.Dir, tlscert.WithLogger(quiet))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, certs.Close()) })
	col := keepwatchprom.NewCollector()
	col.AddTLS(certs, certs)
	reg := registry(col)

	l := "{path=" + v.Dir + "}"
	// The watch of its files takes its first read on its own goroutine,
	// after New returns: its last read and check are exported from then.
	require.Eventually(t, func() bool { return !certs.Stats().Files.LastCheck.IsZero() }, waitFor, time.Millisecond)
	m := scrape(t, reg)
	assert.Equal(t, 1.0, m["keepwatch_tls_rotations_total"+l], "New's pair counts")
	assert.Equal(t, 0.0, m["keepwatch_tls_rotations_rejected_total"+l])
	assert.Equal(t, 1.0, m["keepwatch_tls_last_rotation_successful"+l])
	assert.Equal(t, float64(first.notAfter.Unix()), m["keepwatch_tls_certificate_expiration_timestamp_seconds"+l])
	assert.InDelta(t, float64(time.Now().Unix()), m["keepwatch_tls_last_rotation_timestamp_seconds"+l], 60)
	assert.Equal(t, 1.0, m["keepwatch_watch_mode{mode=events,path="+v.Dir+"}"], "the watch of its files, as a provider's")
	assert.Len(t, m, 5+3+4+4, "nothing else: %v", m)

	// A pair whose key is another certificate's: refused, the one in
	// force stays.
	other := issue(t, "other", time.Now().Add(30*24*time.Hour))
	_, err = v.Update(map[string]string{"tls.crt": other.cert, "tls.key": first.key})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return certs.Stats().Rejected == 1 }, waitFor, time.Millisecond)
	m = scrape(t, reg)
	assert.Equal(t, 1.0, m["keepwatch_tls_rotations_total"+l])
	assert.Equal(t, 1.0, m["keepwatch_tls_rotations_rejected_total"+l])
	assert.Equal(t, 0.0, m["keepwatch_tls_last_rotation_successful"+l])
	assert.Equal(t, float64(first.notAfter.Unix()), m["keepwatch_tls_certificate_expiration_timestamp_seconds"+l], "the certificate in force's")

	_, err = v.Update(other.secret())
	require.NoError(t, err)
	require.Eventually(t, func() bool { return certs.Stats().Loaded == 2 }, waitFor, time.Millisecond)
	m = scrape(t, reg)
	assert.Equal(t, 2.0, m["keepwatch_tls_rotations_total"+l])
	assert.Equal(t, 1.0, m["keepwatch_tls_rotations_rejected_total"+l])
	assert.Equal(t, 1.0, m["keepwatch_tls_last_rotation_successful"+l])
	assert.Equal(t, float64(other.notAfter.Unix()), m["keepwatch_tls_certificate_expiration_timestamp_seconds"+l])
}

// A TLS watcher of a directory a provider watches too would export the
// provider's series twice: the scrape fails, naming it.
func TestATLSWatcherAndAProviderOfOnePath(t *testing.T) {
	col := keepwatchprom.NewCollector()
	col.AddProvider(stats{Path: "/etc/tls"})
	col.AddTLS(tlsStats{Files: file.Stats{Path: "/etc/tls"}})
	_, err := registry(col).Gather()
	require.Error(t, err)
	assert.Contains(t, err.Error(), `keepwatchprom: two providers or TLS watchers of the path "/etc/tls"`)
}

type tlsStats tlscert.Stats

func (s tlsStats) Stats() tlscert.Stats { return tlscert.Stats(s) }

// The names follow Prometheus's conventions, as promlint checks them.
func TestTheMetricsPassPromlint(t *testing.T) {
	col := keepwatchprom.NewCollector()
	col.AddConfig(&config{Name: "app", Published: 1, LastSucceeded: true, LastPublished: time.Now(), Identity: "sha256:ab", Comparable: true})
	col.AddProvider(stats{Path: "/etc/app/app.yaml", Mode: file.ModeEvents, LastRead: time.Now(), LastCheck: time.Now()})
	col.AddTLS(tlsStats{Loaded: 1, LastLoaded: time.Now(), NotAfter: time.Now().Add(time.Hour), Files: file.Stats{Path: "/etc/tls"}})
	problems, err := testutil.GatherAndLint(registry(col))
	require.NoError(t, err)
	assert.Empty(t, problems)
}

// issued is a self-signed certificate and its key, as PEM.
type issued struct {
	cert, key string
	notAfter  time.Time
}

func (c issued) secret() map[string]string {
	return map[string]string{"tls.crt": c.cert, "tls.key": c.key}
}

func issue(t testing.TB, cn string, notAfter time.Time) issued {
	t.Helper()
	c, err := selfSigned(cn, notAfter)
	require.NoError(t, err)
	return c
}

func selfSigned(cn string, notAfter time.Time) (issued, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return issued{}, err
	}
	notAfter = notAfter.Truncate(time.Second)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: cn},
		DNSNames:     []string{cn},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     notAfter,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return issued{}, err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return issued{}, err
	}
	return issued{
		cert:     string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})),
		key:      string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})),
		notAfter: notAfter,
	}, nil
}

var quiet = slog.New(slog.DiscardHandler)
