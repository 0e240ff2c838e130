package prom_test

import (
	"bufio"
	"fmt"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"

	"github.com/keepwatch/file"
	"github.com/keepwatch/file/keepwatchprom"
	"github.com/keepwatch/file/live"
	"github.com/knadh/koanf/parsers/yaml"
	"github.com/knadh/koanf/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// A service with a live config, its metrics on /metrics and its readiness
// on /readyz. The identity key comes from a Secret every replica mounts.
func ExampleCollector() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "app.yaml")
	_ = os.WriteFile(path, []byte("port: 8080\n"), 0o644)
	key := []byte("from /etc/keepwatch-identity/key") // os.ReadFile of the Secret's key

	f := file.Provider(path)
	cfg := &live.Config{
		Name:        "app",
		Load:        func(k *koanf.Koanf) error { return k.Load(f, yaml.Parser()) },
		Watch:       []live.Watcher{f},
		IdentityKey: key,
		Logger:      slog.New(slog.DiscardHandler),
	}
	if err := cfg.Start(); err != nil {
		log.Fatal(err)
	}
	defer cfg.Close()

	metrics := keepwatchprom.NewCollector()
	metrics.AddConfig(cfg)
	metrics.AddProvider(f)
	reg := prometheus.NewRegistry()
	reg.MustRegister(metrics)

	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.Handle("/readyz", live.ReadyHandler(cfg))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if line := sc.Text(); strings.HasPrefix(line, "keepwatch_config_") && !strings.Contains(line, "timestamp") {
			fmt.Println(line)
		}
	}
	// Output:
	// keepwatch_config_comparable{config="app"} 1
	// keepwatch_config_info{config="app",identity="hmac-sha256:3ef851366a058f0fcc6756481211910569e08723e186b3cc369fd1c952dc99d8"} 1
	// keepwatch_config_last_reload_successful{config="app"} 1
	// keepwatch_config_reloads_failed_total{config="app"} 0
	// keepwatch_config_reloads_total{config="app"} 1
}
