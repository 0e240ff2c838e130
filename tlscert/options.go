package tlscert

import (
	"log/slog"

	"github.com/keepwatch/file"
)

// An Option configures a [Watcher].
type Option func(*options)

type options struct {
	names  names
	logger *slog.Logger // nil: slog.Default at each record
	file   []file.Option
}

// WithFiles names the certificate and key files in the directory.
// Default: "tls.crt" and "tls.key", a kubernetes.io/tls Secret's keys.
func WithFiles(cert, key string) Option {
	return func(o *options) { o.names.cert, o.names.key = cert, key }
}

// WithClientCA names the CA bundle in the directory that client
// certificates must chain to: "ca.crt" in a Secret cert-manager issued.
// It is read with the pair, as one generation, and must be there. Serve
// it with [Watcher.TLSConfig]. Default: none, no client certificates.
func WithClientCA(name string) Option {
	return func(o *options) { o.names.ca = name }
}

// WithLogger sets the logger for the pairs taken and refused, and for the
// watch of the files. Default: [slog.Default] at the time of each record.
func WithLogger(l *slog.Logger) Option {
	return func(o *options) { o.logger = l }
}

// WithFileOptions passes options to the watch of the files, a
// [file.FileSet]: [file.WithPolling] for a filesystem without events,
// [file.WithRecheckInterval], and so on.
func WithFileOptions(opts ...file.Option) Option {
	return func(o *options) { o.file = append(o.file, opts...) }
}

func (o *options) log() *slog.Logger {
	if o.logger != nil {
		return o.logger
	}
	return slog.Default()
}
