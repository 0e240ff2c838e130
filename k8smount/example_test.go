package k8smount_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/keepwatch/file/k8smount"
	"github.com/keepwatch/file/kubevol"
)

// A ConfigMap mounted as a volume, one key per file, read and watched as
// with upstream's provider; each read is one kubelet generation. A koanf
// program loads it with k.Load(mount, nil).
func Example() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	cm, err := kubevol.New(filepath.Join(dir, "config"), map[string]string{"log_level": "info", "db_host": "db-1"})
	if err != nil {
		log.Fatal(err)
	}

	mount := k8smount.Provider(cm.Dir, "_", k8smount.Opt{})
	m, err := mount.Read()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(m)

	changed := make(chan map[string]any, 1)
	if err := mount.Watch(func(any, error) {
		m, err := mount.Read() // in the callback: the update it was called for
		if err == nil {
			changed <- m
		}
	}); err != nil {
		log.Fatal(err)
	}
	defer mount.Unwatch()
	if _, err := cm.Update(map[string]string{"log_level": "debug", "db_host": "db-2"}); err != nil {
		log.Fatal(err)
	}
	fmt.Println(<-changed)
	// Output:
	// map[db:map[host:db-1] log:map[level:info]]
	// map[db:map[host:db-2] log:map[level:debug]]
}
