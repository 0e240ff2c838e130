package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/keepwatch/file"
	"github.com/keepwatch/file/keepwatchprom"
	"github.com/keepwatch/file/live"
	"github.com/keepwatch/file/tlscert"
	"github.com/knadh/koanf/parsers/yaml"
	"github.com/knadh/koanf/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// App is the replica's service config, from app.yaml of its ConfigMap.
type App struct {
	Greeting string `koanf:"greeting"`
	Replicas int    `koanf:"replicas"`
}

// replica is one pod of the Deployment: a service with two live configs,
// app (a Value from a ConfigMap's key) and authz (a Config from another
// ConfigMap's two keys, read as one set), both under the identity key
// from a Secret every pod mounts, and the TLS certificate of a
// kubernetes.io/tls Secret (tlscert); /metrics and /readyz on a port of
// loopback it prints as "listening ADDR".
func replica(args []string) error {
	fs := flag.NewFlagSet("replica", flag.ContinueOnError)
	appDir := fs.String("app", "", "the app ConfigMap's volume")
	authzDir := fs.String("authz", "", "the authz ConfigMap's volume")
	keyFile := fs.String("key", "", "the identity key, in a Secret's volume")
	tlsDir := fs.String("tls", "", "the TLS Secret's volume (tls.crt, tls.key)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	key, err := os.ReadFile(*keyFile)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))

	appFile := file.Provider(filepath.Join(*appDir, "app.yaml"), file.WithLogger(log), file.WithWaitForPath())
	app := &live.Value[*App]{
		Name:  "app",
		Load:  func(k *koanf.Koanf) error { return k.Load(appFile, yaml.Parser()) },
		Watch: []live.Watcher{appFile},
		Validate: func(a *App) error {
			if a.Replicas < 1 {
				return errors.New("replicas: at least 1")
			}
			return nil
		},
		IdentityKey: key,
		Logger:      log,
	}
	authzSet := file.Set(*authzDir, []string{"policy.yaml", "roles.yaml"}, yaml.Parser(), file.WithLogger(log), file.WithWaitForPath())
	authz := &live.Config{
		Name:        "authz",
		Load:        func(k *koanf.Koanf) error { return k.Load(authzSet, nil) },
		Watch:       []live.Watcher{authzSet},
		IdentityKey: key,
		Logger:      log,
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	start, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for _, c := range []interface{ StartWait(context.Context) error }{app, authz} {
		if err := c.StartWait(start); err != nil {
			return err
		}
	}

	certs, err := tlscert.New(*tlsDir, tlscert.WithLogger(log))
	if err != nil {
		return err
	}
	defer certs.Close()

	metrics := keepwatchprom.NewCollector()
	metrics.AddConfig(app, authz)
	metrics.AddProvider(appFile, authzSet)
	metrics.AddTLS(certs)
	reg := prometheus.NewRegistry()
	reg.MustRegister(metrics)
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.Handle("/readyz", live.ReadyHandler(app, authz))

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	fmt.Printf("listening %s\n", ln.Addr())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shut)
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return errors.Join(app.Shutdown(shut), authz.Shutdown(shut))
}
