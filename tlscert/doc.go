// Package tlscert serves a TLS certificate from files that change under a
// running service: a kubernetes.io/tls Secret mounted in a pod (tls.crt,
// tls.key and, with cert-manager, ca.crt), or any directory a rotation
// tool writes. It replaces controller-runtime's certwatcher in as many
// lines:
//
//	certs, err := tlscert.New("/etc/tls") // reads, checks and watches tls.crt and tls.key
//	if err != nil {
//		log.Fatal(err)
//	}
//	defer certs.Close()
//	srv := &http.Server{TLSConfig: &tls.Config{GetCertificate: certs.GetCertificate}}
//
// # One generation, checked, or the last good one
//
// The certificate, its key and the CA bundle are read as one
// [file.FileSet]: in a kubelet volume every read takes all of them from the
// one payload ..data leads to, so a certificate never meets another
// generation's key, and a Secret update is read at once. Each pair read is
// checked before it is served: the certificate parses, the key parses and
// is the certificate's, and the CA bundle, if any, holds a certificate. A
// pair that fails leaves the one in force serving: it is logged at WARN,
// counted in [Stats], and the next good pair is taken. The watch is
// keepwatch's: it never stops on its own.
//
// # Expiry
//
// A certificate that has expired is refused while the one in force has
// not: serving it would fail every handshake, the outage a watcher exists
// to prevent (a backup restored, a renewal that wrote the old file). Once
// the one in force has expired too, a pair that expired later is no worse
// and is taken, with a WARN; one that expired earlier is refused. New takes an expired pair with a WARN rather than fail: a
// service that cannot start cannot take the renewed Secret either, and
// certwatcher starts on one too. A certificate not yet valid is taken: a
// fresh certificate and a clock a few seconds behind its issuer's are
// common, and the clients judge by their own clocks.
//
// # Client certificates
//
// [WithClientCA] names a CA bundle in the same directory (cert-manager's
// ca.crt); [Watcher.TLSConfig] then gives each handshake, through
// GetConfigForClient, the certificate and the CA bundle of one generation,
// and requires a client certificate the bundle verifies.
//
// # Secrets stay secret
//
// Nothing derived from the key's bytes is ever put in an error, a log
// record or Stats: a key that does not parse is reported as such, without
// the parser's detail. What is logged of a certificate is public: its
// serial number, subject and expiry.
package tlscert
