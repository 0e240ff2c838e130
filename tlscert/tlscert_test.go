package tlscert_test

import (
	"crypto/rand"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/keepwatch/file/kubevol"
	"github.com/keepwatch/file/tlscert"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func newVolume(t *testing.T, payload map[string]string) *kubevol.Volume {
	t.Helper()
	v, err := kubevol.New(filepath.Join(t.TempDir(), "tls"), payload)
	require.NoError(t, err)
	return v
}

func update(t *testing.T, v *kubevol.Volume, payload map[string]string) {
	t.Helper()
	_, err := v.Update(payload)
	require.NoError(t, err)
}

// The certificate of a kubernetes.io/tls Secret is served, and each
// rotation of the Secret (certificate and key in one update) is served
// from then on, without a restart.
func TestServesTheSecretAndEachRotation(t *testing.T) {
	ca := newAuthority(t, "ca")
	v := newVolume(t, secret(ca.issue(t, "v1", time.Time{})))
	logs := &logBuffer{}
	certs, err := tlscert.New(v.Dir, tlscert.WithLogger(logs.logger()))
	require.NoError(t, err)
	closeWhenDone(t, certs)
	addr := server(t, &tls.Config{GetCertificate: certs.GetCertificate})

	served(t, addr, ca.pool(), "v1")
	for _, cn := range []string{"v2", "v3"} {
		update(t, v, secret(ca.issue(t, cn, time.Time{})))
		served(t, addr, ca.pool(), cn)
	}
	st := certs.Stats()
	assert.Equal(t, uint64(3), st.Loaded)
	assert.Zero(t, st.Rejected)
	assert.NotEmpty(t, st.Files.Generation)
	assert.Equal(t, 3, strings.Count(logs.String(), "keepwatch: TLS certificate loaded"), logs)
}

// A pair that does not work leaves the one in force serving: a key that is
// another certificate's, a key or certificate that does not parse, a key
// missing. Each is logged and counted, with an error callers can tell
// apart; none of them puts the key's bytes anywhere. The next good pair is
// served.
func TestABadPairKeepsTheOneInForce(t *testing.T) {
	ca := newAuthority(t, "ca")
	good := ca.issue(t, "good", time.Time{})
	other := ca.issue(t, "other", time.Time{})
	v := newVolume(t, secret(good))
	logs := &logBuffer{}
	certs, err := tlscert.New(v.Dir, tlscert.WithLogger(logs.logger()))
	require.NoError(t, err)
	closeWhenDone(t, certs)
	addr := server(t, &tls.Config{GetCertificate: certs.GetCertificate})

	garbage := make([]byte, 121)
	_, _ = rand.Read(garbage)
	garbageKey := string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: garbage}))
	bad := []struct {
		name    string
		payload map[string]string
		is      error
		says    string
	}{
		{"another certificate's key", map[string]string{"tls.crt": good.cert, "tls.key": other.key},
			tlscert.ErrKeyMismatch, "check " + v.Path("tls.key") + ": keepwatch: private key does not match certificate"},
		{"a key that does not parse", map[string]string{"tls.crt": good.cert, "tls.key": garbageKey},
			nil, "parse " + v.Path("tls.key") + ": keepwatch: private key does not parse"},
		{"no key at all", map[string]string{"tls.crt": good.cert, "tls.key": good.cert},
			nil, "parse " + v.Path("tls.key") + ": keepwatch: no PEM private key"},
		{"a certificate that does not parse", map[string]string{"tls.crt": strings.ReplaceAll(good.key, "PRIVATE KEY", "CERTIFICATE"), "tls.key": good.key},
			nil, "parse " + v.Path("tls.crt") + ": x509: "},
	}
	for i, b := range bad {
		update(t, v, b.payload)
		require.Eventually(t, func() bool { return certs.Stats().Rejected == uint64(i+1) }, waitFor, tick, b.name)
		st := certs.Stats()
		assert.ErrorContains(t, st.LastError, b.says, b.name)
		if b.is != nil {
			assert.ErrorIs(t, st.LastError, b.is, b.name)
		}
		served(t, addr, ca.pool(), "good")
	}
	update(t, v, secret(other))
	served(t, addr, ca.pool(), "other")

	assert.Equal(t, len(bad), strings.Count(logs.String(), "keepwatch: TLS certificate not reloaded, the one in force stays"), logs)
	for _, key := range []string{good.key, other.key, garbageKey} {
		for line := range strings.Lines(key) {
			if strings.HasPrefix(line, "-----") {
				continue
			}
			line = strings.TrimSpace(line)
			assert.NotContains(t, logs.String(), line, "the log quotes a key")
		}
	}
	assert.NotContains(t, logs.String(), "asn1", "the log describes a key's structure")

	js, err := json.Marshal(certs.Stats())
	require.NoError(t, err)
	assert.Contains(t, string(js), `"Rejected":4`)
	assert.Contains(t, string(js), `"LastError":"parse `+v.Path("tls.crt"))
}

// A pair written file by file in the wrong order, the key first, is served
// whole once both are there: the certificate in force meanwhile goes on,
// and no handshake fails or gets an older certificate than one it got
// before.
func TestAPairWrittenKeyFirstNeverFailsAHandshake(t *testing.T) {
	ca := newAuthority(t, "ca")
	v := newVolume(t, secret(ca.issue(t, "0", time.Time{})))
	certs, err := tlscert.New(v.Dir, tlscert.WithLogger(quiet))
	require.NoError(t, err)
	closeWhenDone(t, certs)
	addr := server(t, &tls.Config{GetCertificate: certs.GetCertificate})

	var failed, older atomic.Int64
	var newest atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				seen := newest.Load() // served before this handshake began
				cn, _, err := handshake(addr, ca.pool(), nil, nil)
				if err != nil {
					failed.Add(1)
					continue
				}
				var n int64
				_, _ = fmt.Sscan(cn, &n)
				if n < seen {
					older.Add(1)
				}
				for cur := newest.Load(); n > cur && !newest.CompareAndSwap(cur, n); cur = newest.Load() {
				}
			}
		})
	}
	const rotations = 10
	cur := ca.issue(t, "0", time.Time{})
	for i := 1; i <= rotations; i++ {
		next := ca.issue(t, fmt.Sprint(i), time.Time{})
		update(t, v, map[string]string{"tls.crt": cur.cert, "tls.key": next.key}) // the key first
		require.Eventually(t, func() bool { return certs.Stats().Rejected == uint64(i) }, waitFor, tick)
		update(t, v, secret(next))
		require.Eventually(t, func() bool { return newest.Load() == int64(i) }, waitFor, tick)
		cur = next
	}
	close(stop)
	wg.Wait()
	assert.Zero(t, failed.Load(), "failed handshakes")
	assert.Zero(t, older.Load(), "handshakes that got an older certificate than one served before")
}

// An expired certificate is refused while the one in force is valid; New
// takes one, with a WARN, rather than leave the service without any.
func TestAnExpiredCertificate(t *testing.T) {
	ca := newAuthority(t, "ca")
	v := newVolume(t, secret(ca.issue(t, "valid", time.Time{})))
	certs, err := tlscert.New(v.Dir, tlscert.WithLogger(quiet))
	require.NoError(t, err)
	closeWhenDone(t, certs)
	addr := server(t, &tls.Config{GetCertificate: certs.GetCertificate})

	update(t, v, secret(ca.issue(t, "expired", time.Now().Add(-time.Minute))))
	require.Eventually(t, func() bool { return certs.Stats().Rejected == 1 }, waitFor, tick)
	assert.ErrorIs(t, certs.Stats().LastError, tlscert.ErrExpired)
	served(t, addr, ca.pool(), "valid")

	logs := &logBuffer{}
	expired, err := tlscert.New(v.Dir, tlscert.WithLogger(logs.logger()))
	require.NoError(t, err)
	closeWhenDone(t, expired)
	assert.Contains(t, logs.String(), "keepwatch: TLS certificate loaded, and it has expired")
	assert.True(t, expired.Stats().NotAfter.Before(time.Now()))

	// With the one in force expired, one that expired earlier still (an
	// older backup) is refused; one that expired later is no worse.
	inForce := expired.Stats().NotAfter
	update(t, v, secret(ca.issue(t, "older", time.Now().Add(-48*time.Hour))))
	require.Eventually(t, func() bool { return expired.Stats().Rejected == 1 }, waitFor, tick)
	assert.ErrorIs(t, expired.Stats().LastError, tlscert.ErrExpired)
	assert.Equal(t, inForce, expired.Stats().NotAfter)
	later := time.Now().Add(-time.Second).Truncate(time.Second)
	update(t, v, secret(ca.issue(t, "later", later)))
	require.Eventually(t, func() bool { return expired.Stats().NotAfter.Equal(later) }, waitFor, tick)
	assert.Equal(t, uint64(1), expired.Stats().Rejected)
}

// New fails, naming the file, when there is nothing good to serve.
func TestNewFailsWithNothingToServe(t *testing.T) {
	ca := newAuthority(t, "ca")
	c := ca.issue(t, "c", time.Time{})
	dir := t.TempDir()
	_, err := tlscert.New(dir)
	assert.ErrorIs(t, err, fs.ErrNotExist)
	assert.EqualError(t, err, "keepwatch: TLS certificate tls.crt, key tls.key in "+dir+": open "+filepath.Join(dir, "tls.crt")+": no such file or directory")

	// A directory that is not there: the library and the files named.
	missing := filepath.Join(dir, "secret")
	_, err = tlscert.New(missing, tlscert.WithClientCA("ca.crt"))
	assert.ErrorIs(t, err, fs.ErrNotExist)
	assert.EqualError(t, err, "keepwatch: TLS certificate tls.crt, key tls.key, CA bundle ca.crt in "+missing+": lstat "+missing+": no such file or directory")

	require.NoError(t, os.WriteFile(filepath.Join(dir, "server.pem"), []byte(c.cert), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "server-key.pem"), []byte(ca.issue(t, "d", time.Time{}).key), 0o600))
	_, err = tlscert.New(dir, tlscert.WithFiles("server.pem", "server-key.pem"))
	assert.ErrorIs(t, err, tlscert.ErrKeyMismatch)

	_, err = tlscert.New(dir, tlscert.WithFiles("server.pem", "server-key.pem"), tlscert.WithClientCA("ca.crt"))
	assert.ErrorIs(t, err, fs.ErrNotExist)
	assert.ErrorContains(t, err, "ca.crt")
}

// With a client CA, each handshake gets the certificate and the CA bundle
// of one generation: a client whose CA left the bundle is refused from the
// rotation on, even with a session it could have resumed, and one whose CA
// came in is let in. HTTP/2 is still negotiated by net/http.
func TestClientCertificatesAreVerifiedAgainstTheBundleInForce(t *testing.T) {
	serverCA, clientsA, clientsB := newAuthority(t, "server-ca"), newAuthority(t, "clients-a"), newAuthority(t, "clients-b")
	srv := serverCA.issue(t, "server", time.Time{})
	alice, bob := clientsA.issue(t, "alice", time.Time{}), clientsB.issue(t, "bob", time.Time{})
	v := newVolume(t, map[string]string{"tls.crt": srv.cert, "tls.key": srv.key, "ca.crt": clientsA.pem})
	certs, err := tlscert.New(v.Dir, tlscert.WithClientCA("ca.crt"), tlscert.WithLogger(quiet))
	require.NoError(t, err)
	closeWhenDone(t, certs)
	addr := server(t, certs.TLSConfig(&tls.Config{MinVersion: tls.VersionTLS12}))

	sessions := tls.NewLRUClientSessionCache(8)
	_, _, err = handshake(addr, serverCA.pool(), &alice.tls, sessions)
	require.NoError(t, err, "alice's CA is trusted")
	_, resumed, err := handshake(addr, serverCA.pool(), &alice.tls, sessions)
	require.NoError(t, err)
	assert.True(t, resumed, "sessions are resumed while the bundle stays")
	_, _, err = handshake(addr, serverCA.pool(), &bob.tls, nil)
	require.Error(t, err, "bob's CA is not trusted yet")
	_, _, err = handshake(addr, serverCA.pool(), nil, nil)
	require.Error(t, err, "a client certificate is required")

	update(t, v, map[string]string{"tls.crt": srv.cert, "tls.key": srv.key, "ca.crt": clientsB.pem})
	require.Eventually(t, func() bool {
		_, _, err := handshake(addr, serverCA.pool(), &bob.tls, nil)
		return err == nil
	}, waitFor, tick, "bob is let in once his CA is in the bundle")
	_, _, err = handshake(addr, serverCA.pool(), &alice.tls, sessions)
	require.Error(t, err, "alice is refused, even with a session to resume")

	// Through net/http: HTTP/2 is negotiated with the per-handshake config.
	hs := &http.Server{
		TLSConfig: certs.TLSConfig(nil),
		Handler:   http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, r.Proto) }),
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var wg sync.WaitGroup
	wg.Go(func() { _ = hs.ServeTLS(ln, "", "") })
	t.Cleanup(func() { hs.Close(); wg.Wait() })
	client := &http.Client{Transport: &http.Transport{
		TLSClientConfig:   &tls.Config{RootCAs: serverCA.pool(), Certificates: []tls.Certificate{bob.tls}},
		ForceAttemptHTTP2: true,
	}}
	defer client.CloseIdleConnections()
	resp, err := client.Get("https://localhost:" + portOf(ln.Addr()))
	require.NoError(t, err)
	defer resp.Body.Close()
	assert.Equal(t, "HTTP/2.0", resp.Proto)
}

func portOf(a net.Addr) string { return fmt.Sprint(a.(*net.TCPAddr).Port) }

// A client certificate mounted from a Secret follows its rotation too.
func TestGetClientCertificateFollowsTheSecret(t *testing.T) {
	ca := newAuthority(t, "ca")
	v := newVolume(t, secret(ca.issue(t, "client-1", time.Time{})))
	certs, err := tlscert.New(v.Dir, tlscert.WithLogger(quiet))
	require.NoError(t, err)
	closeWhenDone(t, certs)
	got := func() string {
		c, err := certs.GetClientCertificate(nil)
		require.NoError(t, err)
		return c.Leaf.Subject.CommonName
	}
	assert.Equal(t, "client-1", got())
	update(t, v, secret(ca.issue(t, "client-2", time.Time{})))
	require.Eventually(t, func() bool { return got() == "client-2" }, waitFor, tick)
}

// Close stops the watch and waits for it; the certificate in force goes on
// being served, and Close may be called again.
func TestCloseKeepsServingTheLastCertificate(t *testing.T) {
	ca := newAuthority(t, "ca")
	v := newVolume(t, secret(ca.issue(t, "last", time.Time{})))
	certs, err := tlscert.New(v.Dir, tlscert.WithLogger(quiet))
	require.NoError(t, err)
	addr := server(t, &tls.Config{GetCertificate: certs.GetCertificate})
	require.NoError(t, certs.Close())
	require.NoError(t, certs.Close())
	update(t, v, secret(ca.issue(t, "after", time.Time{})))
	served(t, addr, ca.pool(), "last")
	assert.Equal(t, uint64(1), certs.Stats().Loaded)
}

// Errors name the file, in the form the rest of keepwatch uses.
func TestErrorsNameTheFile(t *testing.T) {
	var pe *fs.PathError
	ca := newAuthority(t, "ca")
	c := ca.issue(t, "c", time.Time{})
	v := newVolume(t, map[string]string{"tls.crt": c.cert, "tls.key": base64.StdEncoding.EncodeToString([]byte(c.key))})
	_, err := tlscert.New(v.Dir)
	require.True(t, errors.As(err, &pe), "%T", err)
	assert.Equal(t, v.Path("tls.key"), pe.Path)
}

// A refused pair's record names the certificate refused, by its serial,
// subject and expiry, and the one in force apart (in_force_serial); a pair
// whose certificate does not parse names the one in force alone.
func TestARefusalNamesTheRefusedCertificate(t *testing.T) {
	ca := newAuthority(t, "ca")
	inForce := ca.issue(t, "in-force", time.Time{})
	other := ca.issue(t, "other", time.Time{})
	expired := ca.issue(t, "expired", time.Now().Add(-time.Minute))
	v := newVolume(t, secret(inForce))
	logs := &logBuffer{}
	certs, err := tlscert.New(v.Dir, tlscert.WithLogger(logs.logger()))
	require.NoError(t, err)
	closeWhenDone(t, certs)
	serial := func(c issued) string { return c.tls.Leaf.SerialNumber.Text(16) }

	refusals := []struct {
		name    string
		payload map[string]string
		says    string
	}{
		{"another certificate with the key in force", map[string]string{"tls.crt": other.cert, "tls.key": inForce.key},
			"serial=" + serial(other) + " subject=\"CN=other\" "},
		{"an expired certificate", secret(expired),
			"serial=" + serial(expired) + " subject=\"CN=expired\" "},
		{"a certificate that does not parse", map[string]string{"tls.crt": "not PEM", "tls.key": inForce.key},
			"error=\"parse " + v.Path("tls.crt") + ": keepwatch: no PEM certificate\" in_force_serial="},
	}
	for i, r := range refusals {
		update(t, v, r.payload)
		var line string
		require.Eventually(t, func() bool {
			n := 0
			for l := range strings.Lines(logs.String()) {
				if strings.Contains(l, "not reloaded") {
					line, n = l, n+1
				}
			}
			return n == i+1
		}, waitFor, tick, r.name)
		assert.Contains(t, line, r.says, r.name)
		assert.Contains(t, line, "in_force_serial="+serial(inForce)+"\n", r.name)
	}
}
