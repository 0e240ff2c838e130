package keepwatchprom

import (
	"fmt"
	"reflect"
	"slices"
	"sync"

	"github.com/keepwatch/file"
	"github.com/keepwatch/file/livestats"
	"github.com/keepwatch/file/tlscert"
	"github.com/prometheus/client_golang/prometheus"
)

// Provider is a keepwatch provider as the collector reads it: a
// [*file.File] or a [*file.FileSet].
type Provider interface {
	Stats() file.Stats
}

// Config is a live config as the collector reads it: a *live.Config or a
// *live.Value of package github.com/keepwatch/file/live. It is
// [livestats.Reporter]: this package imports no koanf module, and neither
// does its module's graph.
type Config = livestats.Reporter

// TLS is a TLS certificate watcher as the collector reads it: a
// [*tlscert.Watcher].
type TLS interface {
	Stats() tlscert.Stats
}

// Collector is a prometheus.Collector of the live configs and providers
// added to it. Register one per registry; it reads their Stats at each
// scrape, which never waits for a reload under way.
//
// Each config's name (its Name, or else the paths it watches) and each
// provider's path must be its own: a second config of the same name, or a
// second provider of the same path, fails the scrape with an error naming
// it, as a registry does for any two series alike.
type Collector struct {
	mu        sync.Mutex
	configs   []Config
	providers []Provider
	certs     []TLS
}

// NewCollector returns a collector with nothing added yet.
func NewCollector() *Collector { return &Collector{} }

// AddConfig adds live configs (*live.Config, *live.Value) to the
// collector, under the label config, their name; one added again is
// ignored. A config is exported from the moment it is added, before its
// Start: as not successful, with no reload, until it publishes a config.
func (c *Collector) AddConfig(configs ...Config) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, r := range configs {
		if !slices.ContainsFunc(c.configs, func(x Config) bool { return same(x, r) }) {
			c.configs = append(c.configs, r)
		}
	}
}

// AddTLS adds TLS certificate watchers ([*tlscert.Watcher]) to the
// collector, under the label path, their directory: the pairs they put in
// force and refused, and the certificate in force's expiry; and the watch
// of their files, as a provider's. One added again is ignored.
func (c *Collector) AddTLS(watchers ...TLS) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, w := range watchers {
		if !slices.ContainsFunc(c.certs, func(x TLS) bool { return same(x, w) }) {
			c.certs = append(c.certs, w)
		}
	}
}

// AddProvider adds providers ([*file.File], [*file.FileSet]) to the
// collector, under the label path; one added again is ignored.
func (c *Collector) AddProvider(providers ...Provider) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range providers {
		if !slices.ContainsFunc(c.providers, func(x Provider) bool { return same(x, p) }) {
			c.providers = append(c.providers, p)
		}
	}
}

// same reports whether a and b are the same, where == can tell: a
// pointer, as Config, Value, File and FileSet are. A value == would panic
// on is never the same as another.
func same(a, b any) bool {
	va := reflect.ValueOf(a)
	return va.IsValid() && va.Comparable() && a == b
}

func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, labels, nil)
}

var (
	reloadSuccessful = desc("keepwatch_config_last_reload_successful",
		"Whether the last reload of the config published it (1) or failed, leaving the config in force (0); 0 until the first config is published.", "config")
	reloadTimestamp = desc("keepwatch_config_last_reload_success_timestamp_seconds",
		"When the config in force was published, Start's included, in seconds since the epoch.", "config")
	reloads = desc("keepwatch_config_reloads_total",
		"Reloads of the config, the first load included, successful or not.", "config")
	reloadsFailed = desc("keepwatch_config_reloads_failed_total",
		"Reloads that failed (Load, Build or Validate) while a config was in force, which stayed.", "config")
	configInfo = desc("keepwatch_config_info",
		"The identity of the config in force (an HMAC under a key the replicas share, or with PlainIdentity its plain SHA-256): equal across replicas that run the same config.", "config", "identity")
	comparable = desc("keepwatch_config_comparable",
		"1 if the config has an identity to compare replicas by (IdentityKey or PlainIdentity), 0 if it has none, and keepwatch_config_info is absent.", "config")

	updates = desc("keepwatch_watch_updates_total",
		"Updates delivered to the provider's callback.", "path")
	watchErrors = desc("keepwatch_watch_errors_total",
		"Problems the provider reported: the file missing, unreadable or too large, the watch broken, a single file mounted on its own (once) and its source replaced.", "path")
	restarts = desc("keepwatch_watch_restarts_total",
		"Watches re-armed, or fallen back to polling, after a failure.", "path")
	mode = desc("keepwatch_watch_mode",
		"1 for how the provider notices changes now (events, polling, retrying, stopped), 0 for the other modes.", "path", "mode")
	subPath = desc("keepwatch_watch_subpath_mount",
		"1 if the file is a single file mounted on its own (a Kubernetes subPath mount, docker's -v of a file): edits in place of its source arrive, a replacement does not.", "path")
	sourceReplaced = desc("keepwatch_watch_mount_source_replaced",
		"1 while the source of the single file mounted at the path is replaced on the host side: the mount holds the old file, and no change arrives until a restart.", "path")
	lastRead = desc("keepwatch_watch_last_read_timestamp_seconds",
		"When the watch last read the file (its first read and each delivery included), in seconds since the epoch.", "path")
	lastCheck = desc("keepwatch_watch_last_check_timestamp_seconds",
		"When the watch last made sure of the file: a read, or a re-check (or poll) that found it unchanged, in seconds since the epoch.", "path")

	rotations = desc("keepwatch_tls_rotations_total",
		"TLS certificate and key pairs put in force, the first one included.", "path")
	rotationsRejected = desc("keepwatch_tls_rotations_rejected_total",
		"TLS certificate and key pairs refused (expired, a key not the certificate's, a file that does not parse): the certificate in force stayed.", "path")
	rotationSuccessful = desc("keepwatch_tls_last_rotation_successful",
		"Whether the last pair read was put in force (1) or refused, the certificate in force staying (0).", "path")
	rotationTimestamp = desc("keepwatch_tls_last_rotation_timestamp_seconds",
		"When the certificate in force was put in force, in seconds since the epoch.", "path")
	notAfter = desc("keepwatch_tls_certificate_expiration_timestamp_seconds",
		"When the certificate in force expires (its not-after), in seconds since the epoch.", "path")
)

// modes are the values of the mode label, in file.Stats's terms.
var modes = []file.Mode{file.ModeEvents, file.ModePolling, file.ModeRetrying, file.ModeStopped}

// Describe sends the descriptors of every metric the collector exports.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{reloadSuccessful, reloadTimestamp, reloads, reloadsFailed, configInfo, comparable,
		updates, watchErrors, restarts, mode, subPath, sourceReplaced, lastRead, lastCheck,
		rotations, rotationsRejected, rotationSuccessful, rotationTimestamp, notAfter} {
		ch <- d
	}
}

// Collect sends the metrics of each config, provider and TLS watcher,
// from one Stats snapshot of each.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	configs, providers, certs := slices.Clone(c.configs), slices.Clone(c.providers), slices.Clone(c.certs)
	c.mu.Unlock()

	names := map[string]bool{}
	for _, r := range configs {
		st := r.Stats()
		switch {
		case st.Name == "":
			continue // a Reporter of another kind, unnamed
		case names[st.Name]:
			ch <- prometheus.NewInvalidMetric(reloadSuccessful,
				fmt.Errorf("keepwatchprom: two live configs named %q: give each its own Name", st.Name))
			continue
		}
		names[st.Name] = true
		collectConfig(ch, st)
	}
	paths := map[string]bool{}
	for _, p := range providers {
		st := p.Stats()
		if paths[st.Path] {
			ch <- prometheus.NewInvalidMetric(updates,
				fmt.Errorf("keepwatchprom: two providers of the path %q", st.Path))
			continue
		}
		paths[st.Path] = true
		collectProvider(ch, st)
	}
	for _, w := range certs {
		st := w.Stats()
		if paths[st.Files.Path] {
			ch <- prometheus.NewInvalidMetric(rotations,
				fmt.Errorf("keepwatchprom: two providers or TLS watchers of the path %q", st.Files.Path))
			continue
		}
		paths[st.Files.Path] = true
		collectTLS(ch, st)
		collectProvider(ch, st.Files)
	}
}

func collectTLS(ch chan<- prometheus.Metric, st tlscert.Stats) {
	path := st.Files.Path
	gauge := func(d *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, path)
	}
	counter := func(d *prometheus.Desc, v uint64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), path)
	}
	counter(rotations, st.Loaded)
	counter(rotationsRejected, st.Rejected)
	gauge(rotationSuccessful, bit(st.LastErrorTime.IsZero() || st.LastLoaded.After(st.LastErrorTime)))
	if !st.LastLoaded.IsZero() {
		gauge(rotationTimestamp, seconds(st.LastLoaded.UnixNano()))
	}
	if !st.NotAfter.IsZero() {
		gauge(notAfter, seconds(st.NotAfter.UnixNano()))
	}
}

func collectConfig(ch chan<- prometheus.Metric, st livestats.Stats) {
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, append([]string{st.Name}, labels...)...)
	}
	counter := func(d *prometheus.Desc, v uint64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), st.Name)
	}
	gauge(reloadSuccessful, bit(st.LastSucceeded))
	if st.Published > 0 {
		gauge(reloadTimestamp, seconds(st.LastPublished.UnixNano()))
	}
	counter(reloads, st.Published+st.Rejected)
	counter(reloadsFailed, st.Rejected)
	if st.Identity != "" && st.Published > 0 {
		gauge(configInfo, 1, st.Identity)
	}
	gauge(comparable, bit(st.Comparable))
}

func collectProvider(ch chan<- prometheus.Metric, st file.Stats) {
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, append([]string{st.Path}, labels...)...)
	}
	counter := func(d *prometheus.Desc, v uint64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), st.Path)
	}
	counter(updates, st.Updates)
	counter(watchErrors, st.Errors)
	counter(restarts, st.Restarts)
	for _, m := range modes {
		gauge(mode, bit(st.Mode == m), string(m))
	}
	gauge(subPath, bit(st.SubPath))
	gauge(sourceReplaced, bit(st.SourceReplaced))
	if !st.LastRead.IsZero() {
		gauge(lastRead, seconds(st.LastRead.UnixNano()))
	}
	if !st.LastCheck.IsZero() {
		gauge(lastCheck, seconds(st.LastCheck.UnixNano()))
	}
}

func bit(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func seconds(ns int64) float64 { return float64(ns) / 1e9 }
