package file

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/knadh/koanf/v2"
)

// Live is a koanf config that reloads itself, and that readers use without
// ever seeing it half loaded. Fill in its fields, then call Start:
//
//	policy := file.Provider("/etc/authz/policy.yaml")
//	cfg := &file.Live{
//		Load:     func(k *koanf.Koanf) error { return k.Load(policy, yaml.Parser()) },
//		Watch:    []file.Watcher{policy},
//		Validate: checkPolicy,
//	}
//	if err := cfg.Start(); err != nil {
//		log.Fatal(err) // no good config to run on
//	}
//	defer cfg.Close()
//	...
//	k := cfg.Koanf() // in each request: the config in force, whole
//
// On each change of something it watches, Live builds a fresh koanf.Koanf
// with Load, runs Validate on it, and only then publishes it, atomically.
// So a key removed from a file is gone from the config (koanf's Load merges
// into the instance it is given: reloading into the same instance would
// keep it), and a reader never sees a config in the middle of its loads.
// A Load that fails (a file that does not parse) or a Validate that
// rejects leaves the last good config in force; it is logged, counted in
// Stats, and told to OnError, and the next good change is applied.
//
// The fields must not be changed after Start. A Live is safe for use by
// multiple goroutines.
type Live struct {
	// Load builds the config into k, a fresh instance each time, from the
	// providers and parsers the application uses: files, file sets,
	// environment variables, flags. It is required.
	Load func(k *koanf.Koanf) error

	// Watch lists what to reload on: the files and file sets Load reads,
	// or any provider with a koanf-style Watch method. Each is watched from
	// Start to Close. The files of one ConfigMap or Secret belong in one
	// FileSet, so that they arrive as one generation.
	Watch []Watcher

	// Validate, if set, checks a config Load built, before it is published.
	// An error rejects it, and the config in force stays. Its text is
	// logged, kept in Stats and told to OnError as it is: say which key is
	// wrong and why, never quote the value, which may be a secret.
	Validate func(k *koanf.Koanf) error

	// OnError, if set, is told of each failed reload (Load or Validate
	// failed, and the config in force stayed), and of each problem a
	// watched provider reports through its callback.
	OnError func(err error)

	// Conf configures each koanf instance Load builds into; the zero value
	// means koanf's "." delimiter.
	Conf koanf.Conf

	// Logger, if set, logs each failed reload at WARN, the first good one
	// after at INFO, and each reload at DEBUG. Default: slog.Default at
	// the time of each record.
	Logger *slog.Logger

	cur atomic.Pointer[koanf.Koanf]

	mu      sync.Mutex    // held by each reload, from Load to the last subscriber
	subs    []*subscriber // in the order they subscribed
	stats   LiveStats
	failing bool // the last reload failed
	state   liveState
}

// Watcher is what a Live watches: a [File], a [FileSet], or any provider
// with a koanf-style Watch method. Live stops it on Close if it has an
// Unwatch method, and waits for it on Shutdown if it has a Shutdown method
// like File's.
type Watcher interface {
	Watch(cb func(event any, err error)) error
}

type liveState uint8

const (
	liveNew liveState = iota
	liveStarted
	liveClosed
)

// LiveStats is a snapshot of what a Live has done, from [Live.Stats].
type LiveStats struct {
	Published     uint64    // configs published, the first included
	Rejected      uint64    // reloads that failed: Load failed or Validate rejected
	LastPublished time.Time // when the config in force was published
	LastError     error     // the last failure, as Load or Validate returned it; nil if none
	LastErrorTime time.Time // when it happened
}

// MarshalJSON renders the stats as JSON, with LastError as its text.
func (s LiveStats) MarshalJSON() ([]byte, error) {
	type plain LiveStats // without this method
	var lastError string
	if s.LastError != nil {
		lastError = s.LastError.Error()
	}
	return json.Marshal(struct {
		plain
		LastError string
	}{plain(s), lastError})
}

var (
	errNoLoad       = errors.New("keepwatch: Live without Load")
	errLiveStarted  = errors.New("keepwatch: Live already started")
	errLiveNotReady = errors.New("keepwatch: Live not started, or closed")
)

// Start loads the config, and publishes it if it validates; then it
// watches everything in Watch. It returns the error of the first load: the
// service has no good config to run on then, and nothing is watched.
func (l *Live) Start() error {
	if l.Load == nil {
		return errNoLoad
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.state != liveNew {
		return errLiveStarted
	}
	if err := l.reloadLocked(); err != nil {
		return err
	}
	for i, w := range l.Watch {
		if err := w.Watch(l.changed); err != nil {
			for _, started := range l.Watch[:i] {
				unwatch(started)
			}
			return fmt.Errorf("keepwatch: watch %T: %w", w, err)
		}
	}
	l.state = liveStarted
	return nil
}

// Koanf returns the config in force: a whole one, never one being loaded,
// which never changes under its reader. It costs an atomic load, and no
// allocation. It is nil until Start has loaded one.
func (l *Live) Koanf() *koanf.Koanf {
	return l.cur.Load()
}

// Reload loads the config again now, as a change would: for a SIGHUP or an
// admin endpoint. It returns why the new config was not published, if it
// was not; the one in force stays then.
func (l *Live) Reload() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.state != liveStarted {
		return errLiveNotReady
	}
	return l.reloadLocked()
}

// Subscribe asks for fn to be called after each config is published, with
// the one it replaced and the new one, until the returned func is called.
// Calls are made one at a time, in order, by the goroutine that reloaded;
// fn must not call Reload, which waits for it.
func (l *Live) Subscribe(fn func(old, new *koanf.Koanf)) (cancel func()) {
	s := &subscriber{fn: fn}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.subs = append(l.subs, s)
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.subs = slices.DeleteFunc(l.subs, func(x *subscriber) bool { return x == s })
	}
}

type subscriber struct{ fn func(old, new *koanf.Koanf) }

// Stats returns a snapshot of what the Live has done.
func (l *Live) Stats() LiveStats {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.stats
}

// Close stops watching; the config in force stays readable. It does not
// wait for a reload under way: Shutdown does.
func (l *Live) Close() error {
	for _, w := range l.stop() {
		unwatch(w)
	}
	return nil
}

// Shutdown stops watching, and waits until every watched provider that
// can be waited for (File and FileSet can) has finished its last callback,
// or until ctx is done.
func (l *Live) Shutdown(ctx context.Context) error {
	var errs []error
	for _, w := range l.stop() {
		if s, ok := w.(interface{ Shutdown(context.Context) error }); ok {
			errs = append(errs, s.Shutdown(ctx))
		} else {
			unwatch(w)
		}
	}
	return errors.Join(errs...)
}

// stop marks the Live closed and returns what it watched, if it was
// watching.
func (l *Live) stop() []Watcher {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.state != liveStarted {
		return nil
	}
	l.state = liveClosed
	return l.Watch
}

func unwatch(w Watcher) {
	if u, ok := w.(interface{ Unwatch() error }); ok {
		_ = u.Unwatch()
	}
}

// changed is the callback of every watched provider.
func (l *Live) changed(_ any, err error) {
	if err != nil {
		l.log().Warn("keepwatch: a watched provider reports a problem", slog.Any("error", err))
		if l.OnError != nil {
			l.OnError(err)
		}
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.state != liveStarted {
		return
	}
	_ = l.reloadLocked()
}

// reloadLocked builds a fresh config, validates it and publishes it, or
// keeps the one in force and reports why.
func (l *Live) reloadLocked() error {
	conf := l.Conf
	if conf.Delim == "" {
		conf.Delim = "."
	}
	k := koanf.NewWithConf(conf)
	err := l.Load(k)
	if err == nil && l.Validate != nil {
		if verr := l.Validate(k); verr != nil {
			err = fmt.Errorf("%w: %w", ErrConfigRejected, verr)
		}
	}
	if err != nil {
		l.rejectLocked(err)
		return err
	}
	old := l.cur.Swap(k)
	l.stats.Published++
	l.stats.LastPublished = time.Now()
	if l.failing {
		l.failing = false
		l.log().Info("keepwatch: config reloaded, the failure is over")
	} else {
		l.log().Debug("keepwatch: config reloaded")
	}
	if old != nil {
		for _, s := range l.subs {
			s.fn(old, k)
		}
	}
	return nil
}

func (l *Live) rejectLocked(err error) {
	l.stats.Rejected++
	l.stats.LastError, l.stats.LastErrorTime = err, time.Now()
	l.failing = true
	if l.cur.Load() != nil {
		l.log().Warn("keepwatch: config not reloaded, the last good one stays in force", slog.Any("error", err))
	}
	if l.OnError != nil {
		l.OnError(err)
	}
}

func (l *Live) log() *slog.Logger {
	if l.Logger != nil {
		return l.Logger
	}
	return slog.Default()
}
