package file_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"
	"sync/atomic"

	"github.com/fsnotify/fsnotify"
	"github.com/keepwatch/file"
	"github.com/keepwatch/file/live"
	"github.com/knadh/koanf/parsers/yaml"
	"github.com/knadh/koanf/v2"
)

// Without package live: the provider on its own, reloading into a fresh koanf
// instance in the callback and swapping it in. koanf's own README loads
// into the instance it already has, which merges: a key removed from the
// file would stay.
func ExampleProvider() {
	path, cleanup := exampleFile("greeting: hello\nshout: true\n")
	defer cleanup()

	f := file.Provider(path)
	var cfg atomic.Pointer[koanf.Koanf]
	k := koanf.New(".")
	if err := k.Load(f, yaml.Parser()); err != nil {
		log.Fatal(err)
	}
	cfg.Store(k)

	reloaded := make(chan fsnotify.Op, 1)
	if err := f.Watch(func(event any, err error) {
		nk := koanf.New(".")
		if err := nk.Load(f, yaml.Parser()); err != nil {
			log.Printf("config reload: %v", err) // keep the config in force
			return
		}
		cfg.Store(nk)
		reloaded <- event.(fsnotify.Event).Op
	}); err != nil {
		log.Fatal(err)
	}
	defer f.Unwatch()

	save(path, "greeting: hello again\n") // shout removed
	op := <-reloaded
	fmt.Println(op, cfg.Load().String("greeting"), cfg.Load().Exists("shout"))
	// Output: WRITE hello again false
}

// The keys of one ConfigMap read as one: in a kubelet volume every read of
// the set goes through one resolution of ..data, so a policy and the roles
// it names always come from the same update.
func ExampleSet() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	_ = os.WriteFile(filepath.Join(dir, "policy.yaml"), []byte("policy: {admins: ops}\n"), 0o644)
	_ = os.WriteFile(filepath.Join(dir, "roles.yaml"), []byte("roles: {ops: [alice]}\n"), 0o644)

	authz := file.Set(dir, []string{"policy.yaml", "roles.yaml"}, yaml.Parser())
	cfg := &live.Config{
		Load:  func(k *koanf.Koanf) error { return k.Load(authz, nil) }, // nil: the set parses its files
		Watch: []live.Watcher{authz},
	}
	if err := cfg.Start(); err != nil {
		log.Fatal(err)
	}
	defer cfg.Close()
	k := cfg.Koanf()
	fmt.Println(k.String("policy.admins"), k.Strings("roles.ops"))
	// Output: ops [alice]
}

// A conf.d directory watched as one config: its files merge in lexical
// order, and a file removed takes its keys with it.
func ExampleGlob() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	_ = os.WriteFile(filepath.Join(dir, "10-base.yaml"), []byte("log: info\nlimit: 10\n"), 0o644)
	_ = os.WriteFile(filepath.Join(dir, "50-debug.yaml"), []byte("log: debug\n"), 0o644)

	confd := file.Glob(filepath.Join(dir, "*.yaml"), yaml.Parser())
	cfg := &live.Config{
		Load:  func(k *koanf.Koanf) error { return k.Load(confd, nil) },
		Watch: []live.Watcher{confd},
	}
	if err := cfg.Start(); err != nil {
		log.Fatal(err)
	}
	defer cfg.Close()
	fmt.Println(cfg.Koanf().String("log"))

	reloaded := make(chan struct{}, 1)
	defer cfg.Subscribe(func(_, _ *koanf.Koanf) { reloaded <- struct{}{} })()
	_ = os.Remove(filepath.Join(dir, "50-debug.yaml"))
	<-reloaded
	fmt.Println(cfg.Koanf().String("log"), cfg.Koanf().Int("limit"))
	// Output:
	// debug
	// info 10
}
