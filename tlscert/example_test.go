package tlscert_test

import (
	"crypto/tls"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/keepwatch/file/kubevol"
	"github.com/keepwatch/file/tlscert"
)

// An HTTPS server whose certificate comes from a kubernetes.io/tls Secret,
// renewed while it serves.
func Example() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	secret, err := kubevol.New(filepath.Join(dir, "tls"), issue("v1")) // the Secret, as kubelet mounts it
	if err != nil {
		log.Fatal(err)
	}

	certs, err := tlscert.New(secret.Dir)
	if err != nil {
		log.Fatal(err)
	}
	defer certs.Close()
	srv := &http.Server{TLSConfig: &tls.Config{GetCertificate: certs.GetCertificate}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	go srv.ServeTLS(ln, "", "")
	defer srv.Close()
	fmt.Println("serving", servedName(ln.Addr()))

	if _, err := secret.Update(issue("v2")); err != nil { // the certificate is renewed
		log.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); servedName(ln.Addr()) != "v2" && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	fmt.Println("serving", servedName(ln.Addr()))
	// Output:
	// serving v1
	// serving v2
}

// exampleCA issues the example's certificates.
var exampleCA, _ = makeAuthority("example-ca")

// issue is a Secret's payload: a certificate named cn and its key.
func issue(cn string) map[string]string {
	c, err := exampleCA.make(cn, time.Time{})
	if err != nil {
		log.Fatal(err)
	}
	return secret(c)
}

// servedName is the name in the certificate the HTTPS server at addr
// serves, on a new connection.
func servedName(addr net.Addr) string {
	client := &http.Client{Transport: &http.Transport{
		TLSClientConfig:   &tls.Config{RootCAs: exampleCA.pool(), ServerName: "localhost"},
		DisableKeepAlives: true,
	}}
	resp, err := client.Get("https://" + addr.String())
	if err != nil {
		return err.Error()
	}
	resp.Body.Close()
	return resp.TLS.PeerCertificates[0].Subject.CommonName
}
