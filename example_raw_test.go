package file_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/keepwatch/file"
	"github.com/keepwatch/file/kubevol"
)

// Every key of a mounted Secret, read as it is, without a parser: a
// certificate, its key and a CA bundle, all of one kubelet generation.
func ExampleDir() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	secret, err := kubevol.New(filepath.Join(dir, "tls"), map[string]string{"tls.crt": "cert 1", "tls.key": "key 1"})
	if err != nil {
		log.Fatal(err)
	}

	set := file.Dir(secret.Dir, nil)
	files, err := set.ReadFiles()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s, %s\n", files["tls.crt"], files["tls.key"])

	updated := make(chan map[string][]byte, 1)
	if err := set.Watch(func(any, error) {
		files, err := set.ReadFiles() // in the callback: what it was fired for
		if err == nil {
			updated <- files
		}
	}); err != nil {
		log.Fatal(err)
	}
	defer set.Unwatch()
	if _, err := secret.Update(map[string]string{"tls.crt": "cert 2", "tls.key": "key 2", "ca.crt": "ca 2"}); err != nil {
		log.Fatal(err)
	}
	files = <-updated
	fmt.Printf("%s, %s, %s\n", files["tls.crt"], files["tls.key"], files["ca.crt"])
	// Output:
	// cert 1, key 1
	// cert 2, key 2, ca 2
}
