package config

import (
	"github.com/keepwatch/file/keepwatchprom"
	"github.com/prometheus/client_golang/prometheus"
)

// Metrics returns a Prometheus collector of the config file's watch: its
// updates, problems and re-arms, how it watches, whether it is a subPath
// mount, and when it last read the file. keepwatchprom brings no koanf
// module of its own, so it sits beside koanf v1 as it is.
func (c *Config) Metrics() prometheus.Collector {
	m := keepwatchprom.NewCollector()
	m.AddProvider(c.f)
	return m
}
