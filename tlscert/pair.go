package tlscert

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"time"
)

var (
	// ErrKeyMismatch means the private key is not the certificate's: a
	// pair written half-way, or a key pasted from another Secret.
	ErrKeyMismatch = errors.New("keepwatch: private key does not match certificate")

	// ErrExpired means the certificate read has expired while the one in
	// force has not: it is refused, and the one in force stays.
	ErrExpired = errors.New("keepwatch: certificate expired")
)

var (
	errNoCertificate = errors.New("keepwatch: no PEM certificate")
	errNoKey         = errors.New("keepwatch: no PEM private key")
	// errBadKey says no more than that: the parser's detail would describe
	// the key's bytes.
	errBadKey = errors.New("keepwatch: private key does not parse")
)

// names are the files of a pair in its directory.
type names struct {
	cert, key, ca string // ca is "" without a client CA
}

// String names the files, for an error: "certificate tls.crt, key
// tls.key", and ", CA bundle ca.crt" with one.
func (n names) String() string {
	s := "certificate " + n.cert + ", key " + n.key
	if n.ca != "" {
		s += ", CA bundle " + n.ca
	}
	return s
}

func (n names) list() []string {
	if n.ca == "" {
		return []string{n.cert, n.key}
	}
	return []string{n.cert, n.key, n.ca}
}

// pair is one generation of the files, parsed and checked: the certificate
// to serve, and the CAs to verify clients with. It is never changed once
// made.
type pair struct {
	cert *tls.Certificate // its Leaf is set
	cas  *x509.CertPool   // nil without a client CA
}

// parse makes a pair of the files of one read of dir. Nothing derived
// from the key's bytes goes into its errors.
func parse(dir string, n names, files map[string][]byte) (*pair, error) {
	chain, leaf, err := parseCertificates(files[n.cert])
	if err != nil {
		return nil, &fs.PathError{Op: "parse", Path: filepath.Join(dir, n.cert), Err: err}
	}
	key, err := parseKey(files[n.key])
	if err != nil {
		return nil, &fs.PathError{Op: "parse", Path: filepath.Join(dir, n.key), Err: err}
	}
	if !matches(leaf.PublicKey, key) {
		return nil, &fs.PathError{Op: "check", Path: filepath.Join(dir, n.key), Err: ErrKeyMismatch}
	}
	p := &pair{cert: &tls.Certificate{Certificate: chain, PrivateKey: key, Leaf: leaf}}
	if n.ca != "" {
		cas, _, err := parseCertificates(files[n.ca])
		if err != nil {
			return nil, &fs.PathError{Op: "parse", Path: filepath.Join(dir, n.ca), Err: err}
		}
		p.cas = x509.NewCertPool()
		for _, der := range cas {
			c, _ := x509.ParseCertificate(der) // parsed once already
			p.cas.AddCert(c)
		}
	}
	return p, nil
}

// judge decides whether next may replace inForce (nil before the first)
// at now: a certificate that has expired may not replace one that has
// not, nor one that expired after it (a backup older still).
func judge(dir string, n names, next, inForce *pair, now time.Time) error {
	if expired(next, now) && inForce != nil &&
		(!expired(inForce, now) || next.cert.Leaf.NotAfter.Before(inForce.cert.Leaf.NotAfter)) {
		return &fs.PathError{Op: "check", Path: filepath.Join(dir, n.cert),
			Err: fmt.Errorf("%w on %s", ErrExpired, next.cert.Leaf.NotAfter.UTC().Format(time.RFC3339))}
	}
	return nil
}

func expired(p *pair, now time.Time) bool { return now.After(p.cert.Leaf.NotAfter) }

// parseCertificates parses every CERTIFICATE block of data, in order: a
// certificate and its chain, or a CA bundle. It returns their DER and the
// first one.
func parseCertificates(data []byte) ([][]byte, *x509.Certificate, error) {
	var ders [][]byte
	var first *x509.Certificate
	for {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, nil, err // a certificate's parse error: public
		}
		if first == nil {
			first = c
		}
		ders = append(ders, block.Bytes)
	}
	if first == nil {
		return nil, nil, errNoCertificate
	}
	return ders, first, nil
}

// parseKey parses the first private key block of data as crypto/tls does
// (PKCS #1, PKCS #8 or SEC 1), skipping others (EC PARAMETERS).
func parseKey(data []byte) (crypto.PrivateKey, error) {
	for {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			return nil, errNoKey
		}
		if block.Type == "PRIVATE KEY" || strings.HasSuffix(block.Type, " PRIVATE KEY") {
			return parseKeyDER(block.Bytes)
		}
	}
}

func parseKeyDER(der []byte) (crypto.PrivateKey, error) {
	if key, err := x509.ParsePKCS1PrivateKey(der); err == nil {
		return key, nil
	}
	if key, err := x509.ParsePKCS8PrivateKey(der); err == nil {
		switch key := key.(type) {
		case *rsa.PrivateKey, *ecdsa.PrivateKey, ed25519.PrivateKey:
			return key, nil
		}
		return nil, errBadKey
	}
	if key, err := x509.ParseECPrivateKey(der); err == nil {
		return key, nil
	}
	return nil, errBadKey
}

// matches reports whether key is the private half of pub.
func matches(pub crypto.PublicKey, key crypto.PrivateKey) bool {
	priv, ok := key.(crypto.Signer)
	if !ok {
		return false
	}
	eq, ok := pub.(interface{ Equal(crypto.PublicKey) bool })
	return ok && eq.Equal(priv.Public())
}
