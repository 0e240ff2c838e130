package tlscert_test

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"log/slog"
	"math/big"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// The process's one inotify instance, shared by every watch: it
		// outlives them.
		goleak.IgnoreAnyFunction("github.com/keepwatch/file/internal/events.(*inotifyBackend).readEvents"),
		goleak.IgnoreAnyFunction("github.com/keepwatch/file/internal/events.(*inotifyBackend).readMounts"),
	)
}

// waitFor is how long a test waits for what should take milliseconds:
// generous, so that a loaded 2-core machine never fails a correct test.
const (
	waitFor = 10 * time.Second
	tick    = 2 * time.Millisecond
)

// authority is a CA that issues certificates for a test.
type authority struct {
	cert   *x509.Certificate
	key    *ecdsa.PrivateKey
	pem    string
	serial atomic.Int64
}

func newAuthority(t testing.TB, name string) *authority {
	t.Helper()
	a, err := makeAuthority(name)
	require.NoError(t, err)
	return a
}

// makeAuthority makes a CA named name.
func makeAuthority(name string) (*authority, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	a := &authority{cert: cert, key: key, pem: string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))}
	a.serial.Store(1)
	return a, nil
}

// issued is a certificate and its key, in PEM.
type issued struct {
	cert, key string
	tls       tls.Certificate
}

// issue makes a certificate named cn for localhost, valid until notAfter
// (zero: a day from now), for servers and clients.
func (a *authority) issue(t testing.TB, cn string, notAfter time.Time) issued {
	t.Helper()
	c, err := a.make(cn, notAfter)
	require.NoError(t, err)
	return c
}

func (a *authority) make(cn string, notAfter time.Time) (issued, error) {
	if notAfter.IsZero() {
		notAfter = time.Now().Add(24 * time.Hour)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return issued{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(a.serial.Add(1)),
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    time.Now().Add(-2 * time.Hour),
		NotAfter:     notAfter,
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, a.cert, &key.PublicKey, a.key)
	if err != nil {
		return issued{}, err
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return issued{}, err
	}
	out := issued{
		cert: string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})),
		key:  string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder})),
	}
	out.tls, err = tls.X509KeyPair([]byte(out.cert), []byte(out.key))
	return out, err
}

func (a *authority) pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(a.cert)
	return p
}

// secret is a kubernetes.io/tls Secret's payload.
func secret(c issued) map[string]string {
	return map[string]string{"tls.crt": c.cert, "tls.key": c.key}
}

// server accepts TLS connections with config and completes each
// handshake, until the test ends.
func server(t *testing.T, config *tls.Config) string {
	t.Helper()
	ln, err := tls.Listen("tcp", "127.0.0.1:0", config)
	require.NoError(t, err)
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(waitFor))
				if c.(*tls.Conn).Handshake() == nil {
					_, _ = c.Write([]byte{1}) // the client reads it: a TLS 1.3 client certificate is checked by then
				}
			})
		}
	})
	t.Cleanup(func() {
		ln.Close()
		wg.Wait()
	})
	return ln.Addr().String()
}

// handshake makes one handshake with the server at addr, trusting roots,
// and returns the common name of the certificate it got.
func handshake(addr string, roots *x509.CertPool, client *tls.Certificate, cache tls.ClientSessionCache) (string, bool, error) {
	cfg := &tls.Config{RootCAs: roots, ServerName: "localhost", ClientSessionCache: cache}
	if client != nil {
		cfg.Certificates = []tls.Certificate{*client}
	}
	d := &net.Dialer{Timeout: waitFor}
	c, err := tls.DialWithDialer(d, "tcp", addr, cfg)
	if err != nil {
		return "", false, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(waitFor))
	if _, err := c.Read(make([]byte, 1)); err != nil {
		return "", false, err
	}
	st := c.ConnectionState()
	return st.PeerCertificates[0].Subject.CommonName, st.DidResume, nil
}

// served waits until the server at addr serves the certificate named cn.
func served(t *testing.T, addr string, roots *x509.CertPool, cn string) {
	t.Helper()
	var last string
	var lastErr error
	require.Eventually(t, func() bool {
		last, _, lastErr = handshake(addr, roots, nil, nil)
		return lastErr == nil && last == cn
	}, waitFor, tick, "serves %q (%v), not %q", last, lastErr, cn)
}

// logBuffer collects a logger's records.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// quiet is a logger that drops everything, for a test that judges by Stats.
var quiet = slog.New(slog.DiscardHandler)

func (b *logBuffer) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// closeWhenDone closes c when the test ends, waiting for its watch.
func closeWhenDone(t *testing.T, c interface{ Close() error }) {
	t.Cleanup(func() { require.NoError(t, c.Close()) })
}
