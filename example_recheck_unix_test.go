//go:build unix

package file_test

import (
	"fmt"
	"log"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/keepwatch/file"
)

// A SIGHUP makes the watch look at the file now: the usual "reload your
// config" signal, judged by content like any other change. Here the file
// sits where no event comes (polling once an hour stands in for NFS), and
// the process sends itself the signal.
func ExampleFile_Recheck() {
	path, cleanup := exampleFile("v: 1\n")
	defer cleanup()
	f := file.Provider(path, file.WithPolling(time.Hour))
	got := loadAndWatch(f)
	defer f.Unwatch()

	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-hup:
				f.Recheck()
			case <-done: // the service's shutdown
				return
			}
		}
	})
	defer wg.Wait()
	defer close(done)
	defer signal.Stop(hup)

	save(path, "v: 2\n")
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		log.Fatal(err)
	}
	<-got // after the quiet window: the file changed, and a writer may be at it
	fmt.Println(f.Stats().LastUpdateReason)
	// Output: request
}
