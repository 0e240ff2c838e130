package live

import (
	"context"
	"log/slog"

	"github.com/knadh/koanf/v2"
)

// Config is a koanf config that reloads itself, and that readers use
// without ever seeing it half loaded. Fill in its fields, then call Start:
//
//	policy := file.Provider("/etc/authz/policy.yaml")
//	cfg := &live.Config{
//		Name:     "authz",
//		Load:     func(k *koanf.Koanf) error { return k.Load(policy, yaml.Parser()) },
//		Watch:    []live.Watcher{policy},
//		Validate: checkPolicy,
//	}
//	if err := cfg.Start(); err != nil {
//		log.Fatal(err) // no good config to run on
//	}
//	defer cfg.Close()
//	...
//	k := cfg.Koanf() // in each request: the config in force, whole
//
// On each change of something it watches, Config builds a fresh
// koanf.Koanf with Load, runs Validate on it, and only then publishes it,
// atomically. So a key removed from a file is gone from the config, and a
// reader never sees a config in the middle of its loads. A Load that fails
// (a file that does not parse) or a Validate that rejects leaves the last
// good config in force; see the package documentation for what is logged
// and told to OnError.
//
// A service that reads its own struct rather than koanf keys uses [Value].
//
// The fields must not be changed after Start. A Config is safe for use by
// multiple goroutines.
type Config struct {
	// Name names the config in its log records and errors, for a service
	// with several. Default: the paths of the keepwatch providers it
	// watches, joined with commas, or, if it watches none, its type.
	Name string

	// Load builds the config into k, a fresh instance each time, from the
	// providers and parsers the application uses: files, file sets,
	// environment variables, flags. It is required.
	Load func(k *koanf.Koanf) error

	// Watch lists what to reload on: the files and file sets Load reads,
	// or any provider with a koanf-style Watch method. Each is watched from
	// Start to Close. The files of one ConfigMap or Secret belong in one
	// file.FileSet, so that they arrive as one generation. A config that
	// watches nothing reloads only on Reload, and Start logs a warning
	// saying so.
	Watch []Watcher

	// Validate, if set, checks a config Load built, before it is published.
	// An error rejects it, and the config in force stays. Its text is
	// logged, kept in Stats and told to OnError as it is: say which key is
	// wrong and why, never quote the value, which may be a secret.
	Validate func(k *koanf.Koanf) error

	// OnError, if set, is told of each failed reload after Start (Load
	// failed or Validate rejected, and the config in force stayed), and of
	// each problem a watched provider calls back with. It is in addition
	// to the log, not instead of it: use it to count or alert, and set
	// Logger to change how failures are logged. Do not fail readiness on
	// it: a bad push reaches every replica at once, and the config in
	// force still serves (see Ready). A failed Start is not told to it:
	// Start returns the error. It may call Close; not Reload or Shutdown,
	// which wait for the reload that tells it.
	OnError func(err error)

	// Conf configures each koanf instance Load builds into; the zero value
	// means koanf's "." delimiter.
	Conf koanf.Conf

	// Logger, if set, logs each config published at INFO (the first, and
	// each reload, with its reason and generation), and each failed
	// reload at WARN. Default: slog.Default at
	// the time of each record.
	Logger *slog.Logger

	// IdentityKey, if set, makes Stats.Identity an HMAC-SHA256 of the
	// config in force under this key, which the replicas of a service
	// share (read from a Secret they all mount): replicas that run the
	// same config show the same Identity, and nobody without the key can
	// test a guess at the config from it. At least MinIdentityKeySize
	// bytes, or Start fails. See the package documentation.
	IdentityKey []byte

	// PlainIdentity, if set and IdentityKey is not, makes Stats.Identity
	// the plain SHA-256 of the config in force. Anyone who can read it can
	// test guesses at the config: never on one that holds a secret.
	PlainIdentity bool

	e engine[*koanf.Koanf]
}

// Start loads the config, and publishes it if it validates; then it
// watches everything in Watch. It returns the error of the first load,
// naming the config: the service has no good config to run on then, and
// nothing is watched. Start may be called again after it failed; its
// failures are not counted as Rejected. To wait for files that are not
// there yet, use StartWait.
func (c *Config) Start() error { return c.e.start(c.spec()) }

// StartWait is Start for a config whose files may not be there yet (an
// init container or a sidecar writes them): it watches everything in
// Watch first, then loads, and loads again on each change they tell of
// (and, for what no watch tells of, after 100 ms, backing off to every
// two seconds) until a
// config validates and is published, or ctx is done. Each reason it waits
// is logged once, at WARN; Ready and Stats tell the last attempt's error
// meanwhile, and its attempts are not counted as Rejected.
//
// Give its keepwatch providers file.WithWaitForPath(): their watches then
// start before their files are there, and tell of their arrival at once.
// Without it, a keepwatch provider's Watch fails while its path does not
// resolve, as koanf's stock provider's does, and StartWait watches again
// at each attempt.
//
// It returns nil once the config is published, and then watches as Start
// does. When ctx is done first, it stops watching and returns the last
// attempt's error, wrapping ctx's too (errors.Is(err,
// context.DeadlineExceeded)); StartWait or Start may be called again.
// Close makes it return.
func (c *Config) StartWait(ctx context.Context) error { return c.e.startWait(ctx, c.spec()) }

func (c *Config) spec() spec[*koanf.Koanf] {
	return spec[*koanf.Koanf]{
		name:     c.Name,
		kind:     "live.Config",
		load:     c.Load,
		build:    func(k *koanf.Koanf) (*koanf.Koanf, error) { return k, nil },
		validate: c.Validate,
		watch:    c.Watch,
		onError:  c.OnError,
		conf:     c.Conf,
		logger:   c.Logger,
		identity: identity{key: c.IdentityKey, plain: c.PlainIdentity},
	}
}

// Koanf returns the config in force: a whole one, never one being loaded,
// which never changes under its reader. It costs an atomic load, and no
// allocation. It is nil until Start has loaded one. Use the instance for
// one request, and call Koanf again for the next: one kept longer goes on
// holding an old config.
func (c *Config) Koanf() *koanf.Koanf {
	_, k := c.e.get()
	return k
}

// Reload loads the config again now, as a change would: for a SIGHUP or an
// admin endpoint. It returns why the new config was not published, if it
// was not; the one in force stays then.
func (c *Config) Reload() error { return c.e.reload(c.spec()) }

// Subscribe asks for fn to be called after each config is published, with
// the one it replaced and the new one, until the returned func is called.
// It may be called before Start, which publishes the first config without
// telling subscribers. Calls are made one at a time, in order, by the
// goroutine that reloaded. No call begins after cancel returns; one under
// way when another goroutine cancels may end after it. fn may Subscribe,
// call a cancel (its own included) and Close; it must not call Reload or
// Shutdown, which wait for it.
func (c *Config) Subscribe(fn func(old, new *koanf.Koanf)) (cancel func()) {
	return c.e.subscribe(fn)
}

// Stats returns a snapshot of what the config has done. It never waits for
// a reload under way.
func (c *Config) Stats() Stats { return c.e.statsOf(c.spec) }

// Ready returns nil once a good config is in force, and from then on, a
// rejected push included: the config in force serves on. Before, it
// returns an error that matches ErrNotReady and wraps the last attempt's
// error. It is a readiness check (func() error); ReadyHandler serves it
// over HTTP.
func (c *Config) Ready() error { return ready(c.e.statsOf(c.spec)) }

// Close stops watching; the config in force stays readable. It does not
// wait for a reload under way: Shutdown does. A closed config is not
// started again: Start and StartWait fail on it.
func (c *Config) Close() error { return c.e.close() }

// Shutdown stops watching, and waits until every watched provider that
// can be waited for (file.File and file.FileSet can) has finished its last
// callback, or until ctx is done. During Start, it waits for Start first;
// given up, Start stops what it watched and fails.
func (c *Config) Shutdown(ctx context.Context) error { return c.e.shutdown(ctx) }
