package keepwatchprom_test

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
	"time"

	"github.com/keepwatch/file"
	"github.com/keepwatch/file/keepwatchprom"
	"github.com/keepwatch/file/tlscert"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// A service's providers on /metrics: here a file the program watches
// itself, as a koanf v1 or v2 program does with the stock provider's
// replacement. Live configs are added with AddConfig (docs/operating.md).
func ExampleCollector() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "app.yaml")
	_ = os.WriteFile(path, []byte("port: 8080\n"), 0o644)

	f := file.Provider(path, file.WithLogger(slog.New(slog.DiscardHandler)))
	if err := f.Watch(func(any, error) {}); err != nil {
		log.Fatal(err)
	}
	defer f.Unwatch()

	metrics := keepwatchprom.NewCollector()
	metrics.AddProvider(f)
	reg := prometheus.NewRegistry()
	reg.MustRegister(metrics)
	printSeries(reg, dir, "keepwatch_watch_mode", "keepwatch_watch_updates_total")
	// Output:
	// keepwatch_watch_mode{mode="events",path="$DIR/app.yaml"} 1
	// keepwatch_watch_mode{mode="polling",path="$DIR/app.yaml"} 0
	// keepwatch_watch_mode{mode="retrying",path="$DIR/app.yaml"} 0
	// keepwatch_watch_mode{mode="stopped",path="$DIR/app.yaml"} 0
	// keepwatch_watch_updates_total{path="$DIR/app.yaml"} 0
}

// A TLS certificate served from a Secret's volume: its rotations, those
// refused, and when the certificate in force expires, for the alerts
// KeepwatchTLSRotationRejected and KeepwatchTLSCertificateExpiresSoon.
func ExampleCollector_AddTLS() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	// A Secret's tls.crt and tls.key; a self-signed certificate here.
	c, _ := selfSigned("example.com", time.Date(2027, 3, 1, 0, 0, 0, 0, time.UTC))
	_ = os.WriteFile(filepath.Join(dir, "tls.crt"), []byte(c.cert), 0o644)
	_ = os.WriteFile(filepath.Join(dir, "tls.key"), []byte(c.key), 0o600)

	certs, err := tlscert.New(dir, tlscert.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		log.Fatal(err)
	}
	defer certs.Close()
	srv := &http.Server{TLSConfig: certs.TLSConfig(nil)} // serves the certificate in force
	_ = srv

	metrics := keepwatchprom.NewCollector()
	metrics.AddTLS(certs)
	reg := prometheus.NewRegistry()
	reg.MustRegister(metrics)
	printSeries(reg, dir, "keepwatch_tls_")
	// Output:
	// keepwatch_tls_certificate_expiration_timestamp_seconds{path="$DIR"} 1.8038592e+09
	// keepwatch_tls_last_rotation_successful{path="$DIR"} 1
	// keepwatch_tls_rotations_rejected_total{path="$DIR"} 0
	// keepwatch_tls_rotations_total{path="$DIR"} 1
}

// printSeries prints the series of a scrape of reg whose names start with
// one of prefixes, dir shown as $DIR, but for the time of the last
// rotation, which is the time of the run.
func printSeries(reg *prometheus.Registry, dir string, prefixes ...string) {
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		for _, p := range prefixes {
			if strings.HasPrefix(sc.Text(), p) && !strings.Contains(sc.Text(), "rotation_timestamp") {
				fmt.Println(strings.ReplaceAll(sc.Text(), dir, "$DIR"))
			}
		}
	}
}
