package live_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"runtime"

	"github.com/keepwatch/file"
	"github.com/keepwatch/file/live"
	"github.com/knadh/koanf/parsers/yaml"
	"github.com/knadh/koanf/v2"
)

// A service whose config a sidecar writes after the process starts: it
// waits for a good config with StartWait, and its /readyz answers 503
// until then. A push Validate rejects leaves it ready, and says so; the
// next good one clears that.
func ExampleReadyHandler() {
	dir, err := os.MkdirTemp("", "example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "app.yaml") // not there yet

	f := file.Provider(path, file.WithWaitForPath()) // its watch waits for the file
	failed, published := make(chan struct{}, 1), make(chan struct{}, 1)
	cfg := &live.Config{
		Name:  "app",
		Load:  func(k *koanf.Koanf) error { return k.Load(f, yaml.Parser()) },
		Watch: []live.Watcher{f},
		Validate: func(k *koanf.Koanf) error {
			if k.Int("port") < 1 {
				return errors.New("port must be positive")
			}
			return nil
		},
		OnError:     func(error) { signal(failed) },
		IdentityKey: []byte("the key every replica shares"),
		Logger:      slog.New(slog.DiscardHandler),
	}
	defer cfg.Subscribe(func(_, _ *koanf.Koanf) { signal(published) })()
	readyz := live.ReadyHandler(cfg)
	probe := func() {
		rec := httptest.NewRecorder()
		readyz.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
		fmt.Print(rec.Code, " ", stamps.ReplaceAllString(rec.Body.String(), "<time>"))
	}

	started := make(chan error, 1)
	go func() { started <- cfg.StartWait(context.Background()) }()
	for cfg.Stats().LastError == nil { // its first attempt
		runtime.Gosched()
	}
	probe()

	save(path, "port: 8080\n") // the sidecar writes it
	if err := <-started; err != nil {
		log.Fatal(err)
	}
	defer cfg.Close()
	probe()

	save(path, "port: 0\n") // a bad push
	<-failed
	probe()

	save(path, "port: 8081\n")
	<-published
	probe()
	// Output:
	// 503 waiting app: no good config yet; the last attempt failed at <time> (the error is in the log)
	// 200 ok      app: in force since <time>, hmac-sha256:2b747a791878d698cc32e04a8fc7519776629751aa0b99b4ff0aa3e01160a1bb
	// 200 ok      app: in force since <time>, hmac-sha256:2b747a791878d698cc32e04a8fc7519776629751aa0b99b4ff0aa3e01160a1bb; a reload failed at <time> and was rejected, the config in force stays (the error is in the log)
	// 200 ok      app: in force since <time>, hmac-sha256:c33238d4c48fa6ae9a65069982092a3a3deb1324e8c927b2a8ba979cfe06a67e
}

var stamps = regexp.MustCompile(`\d{4}-\d\d-\d\dT[\d:.]+Z`)
