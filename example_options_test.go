package file_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"expvar"
	"fmt"
	"io/fs"
	"log"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/keepwatch/file"
)

// exampleFile makes a config file in a temporary directory.
func exampleFile(content string) (path string, cleanup func()) {
	dir, err := os.MkdirTemp("", "example")
	if err != nil {
		log.Fatal(err)
	}
	path = filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		log.Fatal(err)
	}
	return path, func() { os.RemoveAll(dir) }
}

// save replaces a file the way editors and kubelet do: write aside, rename.
func save(path, content string) {
	if err := os.WriteFile(path+".tmp", []byte(content), 0o644); err != nil {
		log.Fatal(err)
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		log.Fatal(err)
	}
}

// loadAndWatch reads f, as k.Load would, and watches it; the channel holds
// a value once there was an update since it was last taken from. The send
// never blocks: a callback must not wait on a reader that may be gone.
func loadAndWatch(f *file.File) <-chan struct{} {
	if _, err := f.ReadBytes(); err != nil {
		log.Fatal(err)
	}
	got := make(chan struct{}, 1)
	if err := f.Watch(func(event any, err error) {
		if err == nil {
			select {
			case got <- struct{}{}:
			default:
			}
		}
	}); err != nil {
		log.Fatal(err)
	}
	return got
}

// Every option, with its default spelled out.
func ExampleProvider_options() {
	f := file.Provider("/etc/app/config.yaml",
		file.WithRecheckInterval(30*time.Second),                       // safety-net re-check; 0 turns it off
		file.WithQuietWindow(100*time.Millisecond),                     // wait for in-place writes to stop
		file.WithPolling(0),                                            // poll every d instead of events; 0: events
		file.WithMaxSize(16<<20),                                       // refuse larger files
		file.WithLogger(slog.New(slog.NewTextHandler(os.Stderr, nil))), // default: slog.Default()
		// Off unless given:
		// file.WithErrorCallbacks(), // the callback hears of problems too
		// file.WithContentHash(),    // a plain SHA-256 in Stats and the log: never on a Secret
	)
	fmt.Println(f.Stats().Mode)
	// Output: stopped
}

// On NFS, SMB or FUSE, inotify says nothing about changes made on another
// host: poll instead. (keepwatch notices such filesystems and polls by
// itself; the option is for the ones it cannot tell.)
func ExampleWithPolling() {
	path, cleanup := exampleFile("v: 1\n")
	defer cleanup()

	f := file.Provider(path, file.WithPolling(50*time.Millisecond))
	got := loadAndWatch(f)
	defer f.Unwatch()
	fmt.Println(f.Stats().Mode)

	save(path, "v: 2\n")
	<-got
	fmt.Println("seen by polling")
	// Output:
	// polling
	// seen by polling
}

// The log has one record per change of state, never one per filesystem
// event. Here the time and the temporary paths are left out.
func ExampleWithLogger() {
	path, cleanup := exampleFile("v: 1\n")
	defer cleanup()

	drop := func(groups []string, a slog.Attr) slog.Attr {
		switch a.Key {
		case slog.TimeKey, "path", "dirs", "fingerprint": // the fingerprint's key is the process's own
			return slog.Attr{}
		}
		return a
	}
	logger := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{ReplaceAttr: drop, Level: slog.LevelDebug}))
	f := file.Provider(path, file.WithLogger(logger))
	got := loadAndWatch(f)
	save(path, "v: 2\n")
	<-got
	// The delivery is logged once the callback returns: Shutdown waits
	// for that, where Unwatch would not.
	if err := f.Shutdown(context.Background()); err != nil {
		log.Fatal(err)
	}
	// Output:
	// level=DEBUG msg="keepwatch: watch started"
	// level=DEBUG msg="keepwatch: update delivered" reason=event size=5
}

// A service started before its config exists, which a sidecar writes
// later. Without the option, Watch fails as koanf's stock provider's does;
// with it, the watch waits for the file and delivers it once it is there.
func ExampleWithWaitForPath() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "config.yaml")

	err := file.Provider(path).Watch(func(any, error) {})
	fmt.Println(errors.Is(err, fs.ErrNotExist))

	f := file.Provider(path, file.WithWaitForPath(),
		file.WithLogger(slog.New(slog.DiscardHandler))) // the file missing is logged at WARN, once
	created := make(chan fsnotify.Op, 1)
	if err := f.Watch(func(event any, err error) {
		if err == nil {
			select {
			case created <- event.(fsnotify.Event).Op:
			default:
			}
		}
	}); err != nil {
		log.Fatal(err)
	}
	defer f.Unwatch()

	save(path, "v: 1\n") // the sidecar writes it
	fmt.Println(<-created)
	// Output:
	// true
	// CREATE
}

// A watch that ends with its context, as koanf users asked for (koanf #340).
func ExampleFile_WatchWithContext() {
	path, cleanup := exampleFile("v: 1\n")
	defer cleanup()

	ctx, cancel := context.WithCancel(context.Background())
	f := file.Provider(path)
	if err := f.WatchWithContext(ctx, func(event any, err error) {}); err != nil {
		log.Fatal(err)
	}
	fmt.Println(f.Stats().Mode)
	cancel()
	f.Unwatch() // changes nothing: the context ended the watch
	fmt.Println(f.Stats().Mode)
	// Output:
	// events
	// stopped
}

// Stats marshal to JSON as they are, so expvar can publish them at
// /debug/vars next to the process's own figures. Nothing in them lets a
// reader test a guess at the content: they are safe for Secrets.
func ExampleFile_Stats_expvar() {
	path, cleanup := exampleFile("v: 1\n")
	defer cleanup()

	f := file.Provider(path)
	expvar.Publish("config_watch", expvar.Func(func() any { return f.Stats() }))
	if _, err := f.ReadBytes(); err != nil {
		log.Fatal(err)
	}
	if err := f.Watch(func(event any, err error) {}); err != nil {
		log.Fatal(err)
	}
	defer f.Unwatch()

	var published struct {
		Mode    string
		Updates uint64
		Size    int64
	}
	if err := json.Unmarshal([]byte(expvar.Get("config_watch").String()), &published); err != nil {
		log.Fatal(err)
	}
	fmt.Println(published.Mode, published.Updates, published.Size)
	// Output: events 0 5
}

// With WithErrorCallbacks the callback hears of each problem as it happens,
// and the watch goes on: an error means "keep the config you have", never
// "restart the watch". Here the file is removed, then written again.
func ExampleWithErrorCallbacks() {
	path, cleanup := exampleFile("v: 1\n")
	defer cleanup()
	f := file.Provider(path, file.WithErrorCallbacks(), file.WithLogger(slog.New(slog.DiscardHandler)))
	if _, err := f.ReadBytes(); err != nil {
		log.Fatal(err)
	}
	said := make(chan string, 1)
	if err := f.Watch(func(event any, err error) {
		msg := "reload"
		switch {
		case errors.Is(err, fs.ErrNotExist):
			msg = "missing: keep the config in force"
		case err != nil:
			msg = "problem: keep the config in force"
		}
		select {
		case said <- msg:
		default:
		}
	}); err != nil {
		log.Fatal(err)
	}
	defer f.Unwatch()

	if err := os.Remove(path); err != nil {
		log.Fatal(err)
	}
	fmt.Println(<-said)
	save(path, "v: 2\n")
	fmt.Println(<-said)
	// Output:
	// missing: keep the config in force
	// reload
}

// The plain SHA-256 of what the application runs, to compare with
// `sha256sum` of the file, is there on request only: anyone who can read it
// can test guesses at the content, so never ask for it on a Secret. Without
// it, Stats carry a fingerprint under a key that never leaves the process.
func ExampleWithContentHash() {
	path, cleanup := exampleFile("v: 1\n")
	defer cleanup()
	sum := sha256.Sum256([]byte("v: 1\n"))

	f := file.Provider(path, file.WithContentHash())
	if _, err := f.ReadBytes(); err != nil {
		log.Fatal(err)
	}
	fmt.Println(f.Stats().SHA256 == hex.EncodeToString(sum[:]))

	secret := file.Provider(path)
	if _, err := secret.ReadBytes(); err != nil {
		log.Fatal(err)
	}
	st := secret.Stats()
	fmt.Printf("%q %v\n", st.SHA256, len(st.Fingerprint))
	// Output:
	// true
	// "" 64
}
