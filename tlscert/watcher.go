package tlscert

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/keepwatch/file"
)

// Watcher serves the certificate in force from a directory, and watches
// the directory for the next one. Create it with [New]; it is safe for use
// by multiple goroutines.
type Watcher struct {
	dir string
	o   options
	set *file.FileSet
	cur atomic.Pointer[pair] // never nil once New has returned

	mu    sync.Mutex
	stats Stats
}

// New reads the certificate and key in dir ("tls.crt" and "tls.key"
// unless [WithFiles] names others), and the client CA bundle if
// [WithClientCA] names one, as one generation; checks them; and watches
// them until Close. It returns the error of that first read, when the
// files are missing, do not parse, or the key is not the certificate's:
// there is nothing to serve then, and nothing is watched.
func New(dir string, opts ...Option) (*Watcher, error) {
	o := options{names: names{cert: "tls.crt", key: "tls.key"}}
	for _, opt := range opts {
		opt(&o)
	}
	w := &Watcher{dir: filepath.Clean(dir), o: o}
	fileOpts := o.file
	if o.logger != nil {
		fileOpts = append([]file.Option{file.WithLogger(o.logger)}, fileOpts...)
	}
	w.set = file.Set(dir, o.names.list(), nil, fileOpts...)
	files, err := w.set.ReadFiles()
	if err != nil {
		return nil, fmt.Errorf("keepwatch: TLS %s in %s: %w", o.names, w.dir, err)
	}
	p, err := parse(w.dir, o.names, files)
	if err != nil {
		return nil, err
	}
	w.put(p, time.Now())
	if err := w.set.Watch(w.changed); err != nil {
		return nil, fmt.Errorf("keepwatch: TLS %s in %s: watch: %w", o.names, w.dir, err)
	}
	return w, nil
}

// GetCertificate returns the certificate in force, for
// tls.Config.GetCertificate. It never fails, and costs one atomic load.
func (w *Watcher) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	return w.cur.Load().cert, nil
}

// GetClientCertificate returns the certificate in force, for a client's
// tls.Config.GetClientCertificate: a client certificate mounted from a
// Secret.
func (w *Watcher) GetClientCertificate(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
	return w.cur.Load().cert, nil
}

// TLSConfig returns a server configuration: a copy of base (nil: Go's
// defaults) that serves the certificate in force. Its Certificates and
// GetCertificate are the watcher's, and with a client CA its ClientCAs
// and GetConfigForClient too.
//
// With a client CA ([WithClientCA]) its GetConfigForClient gives each
// handshake a copy of the returned configuration, made at the first
// handshake after each change (so that what net/http adds to it for
// HTTP/2 is there), with the certificate and the CA bundle of one
// generation, and ClientAuth RequireAndVerifyClientCert unless base asks
// for another. A session is resumed only while the bundle in force
// verifies its client certificate (crypto/tls checks it again on
// resumption).
func (w *Watcher) TLSConfig(base *tls.Config) *tls.Config {
	out := &tls.Config{}
	if base != nil {
		out = base.Clone()
	}
	out.Certificates, out.GetCertificate = nil, w.GetCertificate
	if w.o.names.ca == "" {
		return out
	}
	// The configuration made for the pair in force, made again when the
	// pair changes.
	type made struct {
		p *pair
		c *tls.Config
	}
	var last atomic.Pointer[made]
	out.GetConfigForClient = func(*tls.ClientHelloInfo) (*tls.Config, error) {
		p := w.cur.Load()
		if m := last.Load(); m != nil && m.p == p {
			return m.c, nil
		}
		c := out.Clone()
		c.GetConfigForClient, c.GetCertificate = nil, nil
		c.Certificates = []tls.Certificate{*p.cert}
		c.ClientCAs = p.cas
		if c.ClientAuth == tls.NoClientCert {
			c.ClientAuth = tls.RequireAndVerifyClientCert
		}
		last.Store(&made{p: p, c: c})
		return c, nil
	}
	return out
}

// Stats returns a snapshot of what the watcher has done.
func (w *Watcher) Stats() Stats {
	w.mu.Lock()
	st := w.stats
	w.mu.Unlock()
	st.NotAfter = w.cur.Load().cert.Leaf.NotAfter
	st.Files = w.set.Stats()
	return st
}

// Close stops watching, and waits until the watch has stopped. The
// certificate in force goes on being served. It may be called more than
// once.
func (w *Watcher) Close() error {
	return w.set.Shutdown(context.Background())
}

// changed is the watch's callback: the files changed.
func (w *Watcher) changed(_ any, err error) {
	if err != nil {
		return // a problem of the files: the set logs it, and counts it in Stats.Files
	}
	now := time.Now()
	files, err := w.set.ReadFiles() // what the callback was fired for
	var p *pair
	if err == nil {
		p, err = parse(w.dir, w.o.names, files)
	}
	if err == nil {
		err = judge(w.dir, w.o.names, p, w.cur.Load(), now)
	}
	if err != nil {
		w.refuse(err, now, files)
		return
	}
	w.put(p, now)
}

// put puts p in force.
func (w *Watcher) put(p *pair, now time.Time) {
	w.cur.Store(p)
	w.mu.Lock()
	w.stats.Loaded++
	w.stats.LastLoaded = now
	w.mu.Unlock()
	leaf := p.cert.Leaf
	attrs := []any{slog.String("path", w.dir), slog.String("serial", serial(leaf)),
		slog.String("subject", leaf.Subject.String()), slog.Time("not_after", leaf.NotAfter)}
	if expired(p, now) {
		w.o.log().Warn("keepwatch: TLS certificate loaded, and it has expired", attrs...)
		return
	}
	w.o.log().Info("keepwatch: TLS certificate loaded", attrs...)
}

// refuse records a pair refused: the one in force stays. The record names
// the refused certificate (serial, subject, not_after) where it parsed,
// and the one in force (in_force_serial).
func (w *Watcher) refuse(err error, now time.Time, files map[string][]byte) {
	w.mu.Lock()
	w.stats.Rejected++
	w.stats.LastError, w.stats.LastErrorTime = err, now
	w.mu.Unlock()
	attrs := []any{slog.String("path", w.dir), slog.Any("error", err)}
	if _, leaf, err := parseCertificates(files[w.o.names.cert]); err == nil {
		attrs = append(attrs, slog.String("serial", serial(leaf)), slog.String("subject", leaf.Subject.String()),
			slog.Time("not_after", leaf.NotAfter))
	}
	attrs = append(attrs, slog.String("in_force_serial", serial(w.cur.Load().cert.Leaf)))
	w.o.log().Warn("keepwatch: TLS certificate not reloaded, the one in force stays", attrs...)
}

func serial(c *x509.Certificate) string { return c.SerialNumber.Text(16) }
