// Command docprogram is docs/kubernetes.md's TLS server with
// controller-runtime's certwatcher, the one tlscert is compared with. It
// lives here, in the module that requires controller-runtime, so that
// make bench-tls builds it; tests/docs checks that it is the program the
// doc shows, line for line after this comment.
package main

import (
	"context"
	"crypto/tls"
	"io"
	"log"
	"net/http"

	"sigs.k8s.io/controller-runtime/pkg/certwatcher"
)

func main() {
	cw, err := certwatcher.New("/etc/tls/tls.crt", "/etc/tls/tls.key")
	if err != nil {
		log.Fatal(err)
	}
	go cw.Start(context.Background())
	srv := &http.Server{
		Addr:      ":8443",
		TLSConfig: &tls.Config{GetCertificate: cw.GetCertificate},
		Handler:   http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "hello\n") }),
	}
	log.Fatal(srv.ListenAndServeTLS("", ""))
}
