package live

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/keepwatch/file"
	"github.com/knadh/koanf/v2"
)

// Watcher is what a live config watches: a [file.File], a [file.FileSet],
// or any provider with a koanf-style Watch method. It is stopped on Close
// if it has an Unwatch method, and waited for on Shutdown if it has a
// Shutdown method like File's.
type Watcher interface {
	Watch(cb func(event any, err error)) error
}

// engine is the one implementation of a live config that [Config] and
// [Value] share: load a fresh koanf, build T from it, validate T, publish
// both in one snapshot, tell the subscribers, close what was replaced; or
// keep the snapshot in force and report why.
type engine[T any] struct {
	cur atomic.Pointer[snapshot[T]] // nil until the first publication

	// reloadMu is held by each reload, from Load to the last subscriber
	// and the Close of the value replaced, so that reloads and what they
	// tell come one at a time, in order. The owner's code runs under it
	// (Load, Build, Validate, the subscribers, OnError), so it is never
	// taken under mu: a subscriber or OnError may Subscribe, cancel and
	// Close (not Shutdown, which waits for the callback it runs in), and
	// Close does not wait for a reload under way.
	reloadMu sync.Mutex
	failing  bool // the last reload failed; reloadMu
	told     bool // the config's lack of an identity was logged; reloadMu

	mu      sync.Mutex       // guards what follows; never held while the owner's code runs
	spec    spec[T]          // set by start, read only after
	label   string           // names the config in errors and logs: its name, or the paths it watches
	attrs   []slog.Attr      // the config and its paths, on each record
	subs    []*subscriber[T] // in the order they subscribed
	state   state
	wake    chan struct{} // while starting: a watched provider called back; holds one, so calls coalesce
	loading chan struct{} // while Start loads: closed when it returns

	// Stats have a lock of their own, never held for long, so that a
	// readiness probe or a metrics scrape never waits for a reload.
	statsMu sync.Mutex
	stats   Stats
	watched []Watcher // the owner's Watch, as start took it
}

// snapshot is one publication: the koanf instance and the value built from
// it, never changed after it is published.
type snapshot[T any] struct {
	k *koanf.Koanf
	v T
}

// spec is what the owner's fields say, taken once by start.
type spec[T any] struct {
	name     string
	kind     string // the name of last resort: "live.Config", "live.Value[main.App]"
	load     func(k *koanf.Koanf) error
	build    func(k *koanf.Koanf) (T, error)
	validate func(v T) error // nil: no check
	watch    []Watcher
	onError  func(err error) // nil: nobody is told
	conf     koanf.Conf
	logger   *slog.Logger // nil: slog.Default at each record
	identity identity
}

// check tells what is wrong with the owner's fields, if anything.
func (s *spec[T]) check() error {
	err := s.identity.check()
	if s.load == nil {
		err = errNoLoad
	}
	if err != nil {
		label, _ := s.label()
		return named(label, err)
	}
	return nil
}

// startable tells why an engine in state st cannot be started with s, if
// it cannot.
func (s *spec[T]) startable(st state) error {
	var err error
	switch st {
	case stateNew:
		return nil
	case stateClosed:
		err = errWasClosed
	default:
		err = errStarted
	}
	label, _ := s.label()
	return named(label, err)
}

type subscriber[T any] struct {
	fn        func(old, new T)
	cancelled atomic.Bool // its cancel was called: no call begins after
}

type state uint8

const (
	stateNew      state = iota
	stateLoading        // Start loads the first config
	stateStarting       // StartWait waits for a good config
	stateStarted
	stateClosed
)

// Why a reload is made, for the log.
const (
	reasonStart   = "start"
	reasonChange  = "change"
	reasonRequest = "request"
)

// start loads, builds, validates and publishes the first snapshot, then
// watches everything in s.watch. A failure leaves the engine new, so that
// Start may be called again.
func (e *engine[T]) start(s spec[T]) error {
	if err := s.check(); err != nil {
		return err
	}
	e.reloadMu.Lock() // a watch's first call back waits for the start to end
	defer e.reloadMu.Unlock()
	if err := e.to(stateLoading, s); err != nil {
		return err
	}
	defer close(e.loading) // a Close or Shutdown meanwhile waits for it
	if err := e.reloadLocked(reasonStart, ""); err != nil {
		e.back()
		return err
	}
	e.loaded()
	for i, w := range s.watch {
		if e.now() == stateClosed { // a Shutdown that gave up waiting
			for _, started := range s.watch[:i] {
				unwatch(started)
			}
			return named(e.label, errClosedStarting)
		}
		if err := w.Watch(e.callback(w)); err != nil {
			for _, started := range s.watch[:i] {
				unwatch(started)
			}
			e.back()
			return fmt.Errorf("keepwatch: %s: watch %T: %w", configText(e.label), w, err)
		}
	}
	if len(s.watch) == 0 {
		e.log(slog.LevelWarn, "keepwatch: config watches nothing: it reloads only when Reload is called")
	}
	if !e.started(stateLoading) { // a Shutdown that gave up waiting
		for _, w := range s.watch {
			unwatch(w)
		}
		return named(e.label, errClosedStarting)
	}
	return nil
}

// to moves a new engine to state st, taking the owner's fields s, or
// tells why it cannot. A StartWait's engine gets its wake channel.
func (e *engine[T]) to(st state, s spec[T]) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := s.startable(e.state); err != nil {
		return err
	}
	e.take(s)
	e.state = st
	switch st {
	case stateStarting:
		e.wake = make(chan struct{}, 1)
	case stateLoading:
		e.loading = make(chan struct{})
	}
	return nil
}

// back makes a start that failed new again, unless it was closed.
func (e *engine[T]) back() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.state != stateClosed {
		e.state = stateNew
	}
}

// started marks the engine started if it is still in state from, and
// reports whether it was: Close may have come while it loaded.
func (e *engine[T]) started(from state) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.state != from {
		return false
	}
	e.state = stateStarted
	return true
}

// now returns the engine's state.
func (e *engine[T]) now() state {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.state
}

// take takes the owner's fields for this start.
func (e *engine[T]) take(s spec[T]) {
	e.spec = s
	var paths []string
	e.label, paths = s.label()
	e.attrs = []slog.Attr{slog.String("config", e.label), slog.Any("paths", paths)}
	e.statsMu.Lock()
	e.stats.Name = e.label
	e.stats.Comparable = s.identity.comparable()
	e.watched = s.watch
	e.statsMu.Unlock()
}

// loaded logs the first config published, as each reload after it is, at
// INFO, with more (StartWait's attempts). A config without an identity
// says so once, at DEBUG: a single replica needs none, and a fleet's
// metrics tell it (keepwatch_config_comparable).
func (e *engine[T]) loaded(more ...slog.Attr) {
	msg := "keepwatch: config loaded"
	if len(more) > 0 {
		msg = "keepwatch: config loaded, the wait is over"
	}
	e.log(slog.LevelInfo, msg, append([]slog.Attr{e.generation()}, more...)...)
	if !e.told && !e.spec.identity.comparable() {
		e.told = true
		e.log(slog.LevelDebug, "keepwatch: config has no identity, its replicas cannot be compared; give it an IdentityKey")
	}
}

// generation is the record of the config in force's generation: 1 for the
// first published, counting each (Stats.Published).
func (e *engine[T]) generation() slog.Attr {
	e.statsMu.Lock()
	defer e.statsMu.Unlock()
	return slog.Uint64("generation", e.stats.Published)
}

// label is the name of the config in its records, errors and metrics: its
// name, or the paths it watches if it has none; and those paths.
func (s *spec[T]) label() (string, []string) {
	paths := make([]string, 0, len(s.watch))
	for _, w := range s.watch {
		if p := pathOf(w); p != "" {
			paths = append(paths, p)
		}
	}
	if s.name != "" {
		return s.name, paths
	}
	if len(paths) > 0 {
		return strings.Join(paths, ","), paths
	}
	// Neither named nor watching a file: the type at least tells which
	// kind of config a record is about.
	return s.kind, paths
}

// pathOf is the path a keepwatch provider watches; "" for another provider.
func pathOf(w Watcher) string {
	if s, ok := w.(interface{ Stats() file.Stats }); ok {
		return s.Stats().Path
	}
	return ""
}

// callback is the watch callback of w.
func (e *engine[T]) callback(w Watcher) func(any, error) {
	path := pathOf(w)
	return func(_ any, err error) {
		if err != nil {
			e.problem(w, path, err)
			return
		}
		e.reloadMu.Lock()
		defer e.reloadMu.Unlock()
		if e.poke() == stateStarted {
			_ = e.reloadLocked(reasonChange, path)
		}
	}
}

// poke returns the engine's state, and wakes a StartWait under way to load
// again.
func (e *engine[T]) poke() state {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.state == stateStarting {
		e.signal()
	}
	return e.state
}

// problem reports a problem a watched provider calls back with. A
// keepwatch provider has logged it already, to its own logger: it is only
// told to OnError then. Another provider's is logged too; koanf's stock
// provider's watch ends with it.
func (e *engine[T]) problem(w Watcher, path string, err error) {
	if path == "" {
		e.log(slog.LevelWarn, "keepwatch: a watched provider reports a problem",
			slog.String("provider", fmt.Sprintf("%T", w)), slog.Any("error", err))
	}
	e.mu.Lock()
	starting := e.state == stateStarting
	if starting {
		e.signal() // its problem may be over by the next load
	}
	onError := e.spec.onError
	e.mu.Unlock()
	if onError != nil && !starting {
		onError(err)
	}
}

// reload is a reload on request of the config s describes.
func (e *engine[T]) reload(s spec[T]) error {
	e.reloadMu.Lock()
	defer e.reloadMu.Unlock()
	if e.now() != stateStarted {
		label, _ := s.label()
		return named(label, errNotStarted)
	}
	return e.reloadLocked(reasonRequest, "")
}

// reloadLocked builds a fresh snapshot and publishes it, or keeps the one
// in force and reports why. changed is the path whose change caused it, if
// a keepwatch provider's did. e.reloadMu is held.
func (e *engine[T]) reloadLocked(reason, changed string) error {
	next, err := e.build()
	if err != nil {
		return e.rejectLocked(reason, changed, err)
	}
	id := e.spec.identity.of(next.k)
	// Swapped in under the stats' lock: whoever sees the new config and
	// then asks for Stats waits for them to count it.
	e.statsMu.Lock()
	old := e.cur.Swap(next)
	e.stats.Published++
	e.stats.LastPublished = time.Now()
	e.stats.LastSucceeded = true
	e.stats.Identity = id
	e.statsMu.Unlock()
	e.logReload(reason, changed, old == nil)
	if old != nil {
		for _, s := range e.subscribers() {
			if !s.cancelled.Load() { // cancelled by one told before it
				s.fn(old.v, next.v)
			}
		}
		e.closeUnless(old.v, next.v)
	}
	return nil
}

// subscribers returns the subscribers now. One added while a publication
// is told is told from the next; one cancelled meanwhile is skipped (its
// cancelled flag), as no call may begin after its cancel returns.
func (e *engine[T]) subscribers() []*subscriber[T] {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.subs)
}

// logReload logs a reload that published its config, at INFO, as
// Prometheus and nginx log theirs, with the config's generation and why:
// so that what a change did shows. The first config's record is its
// starter's (loaded).
func (e *engine[T]) logReload(reason, changed string, first bool) {
	if first {
		e.failing = false
		return
	}
	attrs := []slog.Attr{slog.String("reason", reason), e.generation()}
	if changed != "" {
		attrs = append(attrs, slog.String("changed", changed))
	}
	msg := "keepwatch: config reloaded"
	if e.failing {
		e.failing = false
		msg = "keepwatch: config reloaded, the failure is over"
	}
	e.log(slog.LevelInfo, msg, attrs...)
}

// build loads a fresh koanf instance, builds the value and validates it.
// A value that was built and then rejected is closed: nobody else has it.
func (e *engine[T]) build() (*snapshot[T], error) {
	conf := e.spec.conf
	if conf.Delim == "" {
		conf.Delim = "."
	}
	k := koanf.NewWithConf(conf)
	if err := e.spec.load(k); err != nil {
		return nil, &reloadError{config: e.label, step: stepLoad, err: err}
	}
	v, err := e.spec.build(k)
	if err != nil {
		return nil, &reloadError{config: e.label, step: stepBuild, err: err}
	}
	if e.spec.validate != nil {
		if err := e.spec.validate(v); err != nil {
			var inForce T
			if cur := e.cur.Load(); cur != nil {
				inForce = cur.v
			}
			e.closeUnless(v, inForce)
			return nil, &reloadError{config: e.label, step: stepValidate, err: err}
		}
	}
	return &snapshot[T]{k: k, v: v}, nil
}

// rejectLocked records a failed reload. After Start, the snapshot in force
// stays: the failure is logged, counted as Rejected and told to OnError.
// The first load's is Start's error, for its caller alone: Start may be
// tried again, and its attempts count as no rejection.
func (e *engine[T]) rejectLocked(reason, changed string, err error) error {
	e.recordFailure(err, e.cur.Load() != nil && reason != reasonStart)
	if reason == reasonStart {
		return err
	}
	e.failing = true
	attrs := []slog.Attr{slog.String("reason", reason), slog.Any("error", err)}
	if changed != "" {
		attrs = append(attrs, slog.String("changed", changed))
	}
	e.log(slog.LevelWarn, "keepwatch: config not reloaded, the last good one stays in force", attrs...)
	if e.spec.onError != nil {
		e.spec.onError(err)
	}
	return err
}

// closeUnless closes old if it is an io.Closer and keep is not the same
// value: a value that holds resources gives them back once nothing reads
// it, unless the value that stays holds the same one.
func (e *engine[T]) closeUnless(old, keep T) {
	c, ok := any(old).(io.Closer)
	if !ok || same(old, keep) {
		return
	}
	if err := c.Close(); err != nil {
		e.log(slog.LevelWarn, "keepwatch: closing a replaced value failed", slog.Any("error", err))
	}
}

// same reports whether a and b are the same value, where == can tell; a
// type == would panic on (a struct holding a map) is never the same.
func same[T any](a, b T) bool {
	va := reflect.ValueOf(any(a))
	return va.IsValid() && va.Comparable() && any(a) == any(b)
}

func (e *engine[T]) get() (T, *koanf.Koanf) {
	if s := e.cur.Load(); s != nil {
		return s.v, s.k
	}
	var zero T
	return zero, nil
}

func (e *engine[T]) subscribe(fn func(old, new T)) (cancel func()) {
	s := &subscriber[T]{fn: fn}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.subs = append(e.subs, s)
	return func() {
		e.mu.Lock()
		defer e.mu.Unlock()
		s.cancelled.Store(true)
		e.subs = slices.DeleteFunc(e.subs, func(x *subscriber[T]) bool { return x == s })
	}
}

// recordFailure records a failed attempt, and counts it as a rejection if
// rejected.
func (e *engine[T]) recordFailure(err error, rejected bool) {
	e.statsMu.Lock()
	defer e.statsMu.Unlock()
	if rejected {
		e.stats.Rejected++
	}
	e.stats.LastSucceeded = false
	e.stats.LastError, e.stats.LastErrorTime = err, time.Now()
}

func (e *engine[T]) snapshotStats() Stats {
	e.statsMu.Lock()
	defer e.statsMu.Unlock()
	return e.stats
}

// statsOf is snapshotStats of the owner whose fields are s: before the
// first start, the config is named, and said comparable or not, as start
// will.
func (e *engine[T]) statsOf(s func() spec[T]) Stats {
	st, watched := e.snapshotStats(), e.watchedNow()
	if st.Name == "" {
		sp := s()
		st.Name, _ = sp.label()
		st.Comparable = sp.identity.comparable()
		watched = sp.watch
	}
	st.SourceReplaced = replacedSources(watched)
	return st
}

// watchedNow is what the config watches, as its last start took it.
func (e *engine[T]) watchedNow() []Watcher {
	e.statsMu.Lock()
	defer e.statsMu.Unlock()
	return e.watched
}

// replacedSources lists the paths of the keepwatch providers in watch
// whose single file mounted on its own had its source replaced: no change
// of them reaches the config until the mount is made again.
func replacedSources(watch []Watcher) []string {
	var out []string
	for _, w := range watch {
		if s, ok := w.(interface{ Stats() file.Stats }); ok {
			if st := s.Stats(); st.SourceReplaced {
				out = append(out, st.Path)
			}
		}
	}
	return out
}

func (e *engine[T]) close() error {
	watched, _ := e.stop(context.Background())
	for _, w := range watched {
		unwatch(w)
	}
	return nil
}

func (e *engine[T]) shutdown(ctx context.Context) error {
	watched, err := e.stop(ctx)
	errs := []error{err}
	for _, w := range watched {
		if s, ok := w.(interface{ Shutdown(context.Context) error }); ok {
			errs = append(errs, s.Shutdown(ctx))
		} else {
			unwatch(w)
		}
	}
	return errors.Join(errs...)
}

// stop marks the engine closed and returns what it watched, if it was
// watching. It waits for no reload, but for a Start under way, as long as
// ctx lets it, so that what the Start watches is stopped with the rest:
// given up, it leaves the Start to stop what it watched. A StartWait
// under way returns, and stops what it watched itself.
func (e *engine[T]) stop(ctx context.Context) ([]Watcher, error) {
	e.mu.Lock()
	if e.state == stateLoading {
		loading := e.loading
		e.mu.Unlock()
		select {
		case <-loading:
		case <-ctx.Done():
		}
		e.mu.Lock()
	}
	defer e.mu.Unlock()
	switch e.state {
	case stateLoading:
		e.state = stateClosed
		return nil, ctx.Err()
	case stateStarting:
		e.state = stateClosed
		e.signal()
		return nil, nil
	case stateStarted:
		e.state = stateClosed
		return e.spec.watch, nil
	}
	return nil, nil
}

func unwatch(w Watcher) {
	if u, ok := w.(interface{ Unwatch() error }); ok {
		_ = u.Unwatch()
	}
}

// log writes a record that names the config and the paths it watches.
func (e *engine[T]) log(level slog.Level, msg string, attrs ...slog.Attr) {
	e.mu.Lock() // a callback of a watch that a failed Start stopped may log while the next Start takes its fields
	l, named := e.spec.logger, e.attrs
	e.mu.Unlock()
	if l == nil {
		l = slog.Default()
	}
	l.LogAttrs(context.Background(), level, msg, append(slices.Clip(named), attrs...)...)
}
