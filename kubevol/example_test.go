package kubevol_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/keepwatch/file"
	"github.com/keepwatch/file/kubevol"
)

// A test of a service's config reload against what kubelet does to a
// ConfigMap volume: the volume is updated step by step as kubelet updates
// it, and the test checks what the service reloads. (package live's tests
// run a live.Config through such a volume.)
func Example() {
	dir, _ := os.MkdirTemp("", "volume")
	defer os.RemoveAll(dir)
	vol, err := kubevol.New(filepath.Join(dir, "authz"), map[string]string{
		"roles.yaml": "roles: {alice: [read, write], bob: [read]}\n",
	})
	if err != nil {
		log.Fatal(err)
	}

	// The service's reload, as it runs in the pod: each change read anew.
	roles := file.Provider(vol.Path("roles.yaml"))
	reloaded := make(chan string, 1)
	if err := roles.Watch(func(any, error) {
		if data, err := roles.ReadBytes(); err == nil { // in the callback: what it fired for
			select { // never block the reload on the test
			case reloaded <- string(data):
			default:
			}
		}
	}); err != nil {
		log.Fatal(err)
	}
	defer roles.Unwatch()

	// kubelet updates the ConfigMap: bob's role is revoked.
	if _, err := vol.Update(map[string]string{"roles.yaml": "roles: {alice: [read, write]}\n"}); err != nil {
		log.Fatal(err)
	}
	fmt.Print("reloaded: ", <-reloaded)

	// An update with the same payload writes nothing at all, as kubelet's.
	changed, _ := vol.Update(map[string]string{"roles.yaml": "roles: {alice: [read, write]}\n"})
	fmt.Println("changed:", changed)
	// Output:
	// reloaded: roles: {alice: [read, write]}
	// changed: false
}

// The steps of an update one by one, to look between them: after the new
// generation is written and before the swap, a pod still reads the old one.
func ExampleVolume_WriteGeneration() {
	dir, _ := os.MkdirTemp("", "volume")
	defer os.RemoveAll(dir)
	vol, _ := kubevol.New(filepath.Join(dir, "flags"), map[string]string{"beta": "off"})
	old, _ := vol.Generation()

	gen, _ := vol.WriteGeneration(map[string]string{"beta": "on", "canary": "5%"})
	b, _ := os.ReadFile(vol.Path("beta"))
	fmt.Println("before the swap:", string(b))

	_ = vol.Swap(gen)
	b, _ = os.ReadFile(vol.Path("beta"))
	_, err := os.Stat(vol.Path("canary"))
	fmt.Println("after the swap:", string(b), "; the new key linked:", err == nil)

	_ = vol.SyncKeys(map[string]string{"beta": "on", "canary": "5%"})
	_ = vol.RemoveGeneration(old)
	b, _ = os.ReadFile(vol.Path("canary"))
	fmt.Println("after the links:", string(b))
	// Output:
	// before the swap: off
	// after the swap: on ; the new key linked: false
	// after the links: 5%
}
