package file_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"
	"sync"

	"github.com/fsnotify/fsnotify"
	"github.com/keepwatch/file"
	"github.com/knadh/koanf/parsers/yaml"
	"github.com/knadh/koanf/v2"
)

// The koanf reload pattern, unchanged from koanf's own README: load once,
// then reload inside the watch callback.
func Example() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "config.yaml")
	_ = os.WriteFile(path, []byte("greeting: hello\n"), 0o644)

	var (
		mu sync.Mutex
		k  = koanf.New(".")
	)
	f := file.Provider(path)
	if err := k.Load(f, yaml.Parser()); err != nil {
		log.Fatal(err)
	}
	fmt.Println(k.String("greeting"))

	reloaded := make(chan fsnotify.Op)
	err := f.Watch(func(event any, err error) {
		if err != nil {
			log.Printf("config watch: %v", err) // reported; the watch goes on
			return
		}
		nk := koanf.New(".")
		if err := nk.Load(f, yaml.Parser()); err != nil {
			log.Printf("config reload: %v", err) // keep the old config
			return
		}
		mu.Lock()
		k = nk
		mu.Unlock()
		reloaded <- event.(fsnotify.Event).Op
	})
	if err != nil {
		log.Fatal(err)
	}
	defer f.Unwatch()

	// Save the file the way editors and kubelet do: write aside, rename over.
	_ = os.WriteFile(path+".tmp", []byte("greeting: hello again\n"), 0o644)
	_ = os.Rename(path+".tmp", path)

	op := <-reloaded
	mu.Lock()
	fmt.Println(op, k.String("greeting"))
	mu.Unlock()
	// Output:
	// hello
	// WRITE hello again
}
