package live

import (
	"context"
	"fmt"
	"log/slog"
	"reflect"

	"github.com/knadh/koanf/v2"
)

// Value is a typed live config: the struct, or the component built from
// it, that a service reads in its hot path. On each change of something
// it watches, Value loads a fresh koanf instance with Load, builds a T
// from it with Build, checks it with Validate, and only then publishes the
// instance and the T together, in one atomic store; or, if any step
// fails, neither, and the last good value stays in force.
//
//	type Authz struct {
//		Roles map[string][]string `koanf:"roles"`
//	}
//	policy := file.Provider("/etc/authz/policy.yaml")
//	authz := &live.Value[Authz]{
//		Load:  func(k *koanf.Koanf) error { return k.Load(policy, yaml.Parser()) },
//		Watch: []live.Watcher{policy},
//	}
//	if err := authz.Start(); err != nil {
//		log.Fatal(err)
//	}
//	defer authz.Close()
//	...
//	roles := authz.Get().Roles["alice"] // in each request: one atomic load
//
// Get returns the value in force at the cost of one atomic load, with no
// lock and no allocation. Every reader shares that value: it must never be
// changed after Build returns it, and a reader must not keep it beyond its
// request, or it goes on reading an old config. T is copied by Get: make
// it a pointer if it is large.
//
// A value that holds resources (a client, a compiled policy with a
// cache) can implement io.Closer: a value replaced by a new one is closed
// after the swap and after the subscribers have returned, unless the new
// value is the same one (a Build that found nothing changed and returned
// the value in force, from Get). A request that got the old value just
// before the swap may still be using it then, so its Close must let such
// a request finish (close idle connections, drain), not pull resources
// from under it. A value that Validate rejects is closed too, unless it
// is the one in force. The last value is not closed by Close or Shutdown,
// since readers may still hold it.
//
// The fields must not be changed after Start. A Value is safe for use by
// multiple goroutines.
type Value[T any] struct {
	// Name names the config in its log records and errors, for a service
	// with several. Default: the paths of the keepwatch providers it
	// watches, joined with commas, or, if it watches none, its type.
	Name string

	// Load builds the config into k, a fresh instance each time, as
	// [Config.Load]. It is required, unless Build reads its input itself:
	// the raw files of a set, with [file.FileSet.ReadFiles] (certificates,
	// keys, tokens), are none of koanf's. The koanf instance is empty then,
	// and so is what Stats.Identity is made of.
	Load func(k *koanf.Koanf) error

	// Watch lists what to reload on, as [Config.Watch].
	Watch []Watcher

	// Build makes the value from the instance Load filled: a compiled
	// policy, a client, a sampler. It may call Get for the value in force,
	// to reuse what did not change. A Build that fails gives back what it
	// opened itself: nobody else has it. Default: koanf's Unmarshal of the
	// whole config into a T (into a new one if T is a pointer), matching
	// fields by the struct tag Tag.
	Build func(k *koanf.Koanf) (T, error)

	// Tag is the struct tag the default Build matches keys by; default
	// "koanf". It is not used when Build is set.
	Tag string

	// Validate, if set, checks a value Build made, before it is published.
	// An error rejects it, and the value in force stays. Its text is
	// logged, kept in Stats and told to OnError: say which key is wrong
	// and why, never quote the value, which may be a secret.
	Validate func(v T) error

	// OnError, if set, is told of each failed reload after Start (Load,
	// Build or Validate failed, and the value in force stayed), and of
	// each problem a watched provider calls back with, as
	// [Config.OnError]: to count or alert, not to fail readiness.
	OnError func(err error)

	// Conf configures each koanf instance Load builds into; the zero value
	// means koanf's "." delimiter.
	Conf koanf.Conf

	// Logger, if set, logs as [Config.Logger]. Default: slog.Default at the
	// time of each record.
	Logger *slog.Logger

	// IdentityKey, if set, makes Stats.Identity an HMAC-SHA256 of the
	// config in force (the koanf instance the value was built from) under
	// this key, as [Config.IdentityKey].
	IdentityKey []byte

	// PlainIdentity, if set and IdentityKey is not, makes Stats.Identity
	// the plain SHA-256 of the config in force, as [Config.PlainIdentity]:
	// never on one that holds a secret.
	PlainIdentity bool

	e engine[T]
}

// Start loads the config, builds the value, and publishes both if the
// value validates; then it watches everything in Watch. It returns the
// error of the first load, naming the config: the service has no good
// value to run on then, and nothing is watched. Start may be called again
// after it failed, as [Config.Start].
func (v *Value[T]) Start() error { return v.e.start(v.spec()) }

// StartWait is Start for a config whose files may not be there yet: it
// watches, and loads on each change, until a value is published or ctx is
// done, as [Config.StartWait].
func (v *Value[T]) StartWait(ctx context.Context) error { return v.e.startWait(ctx, v.spec()) }

func (v *Value[T]) spec() spec[T] {
	build, load := v.Build, v.Load
	if build == nil {
		build = unmarshal[T](v.Tag)
	} else if load == nil {
		load = func(*koanf.Koanf) error { return nil } // Build reads its own input
	}
	return spec[T]{
		name:     v.Name,
		kind:     fmt.Sprintf("live.Value[%T]", *new(T)),
		load:     load,
		build:    build,
		validate: v.Validate,
		watch:    v.Watch,
		onError:  v.OnError,
		conf:     v.Conf,
		logger:   v.Logger,
		identity: identity{key: v.IdentityKey, plain: v.PlainIdentity},
	}
}

// unmarshal is the default Build: koanf's Unmarshal with the struct tag
// tag ("" is koanf's default, "koanf").
func unmarshal[T any](tag string) func(k *koanf.Koanf) (T, error) {
	return func(k *koanf.Koanf) (T, error) {
		var v T
		into := any(&v)
		if t := reflect.TypeFor[T](); t.Kind() == reflect.Pointer {
			p := reflect.New(t.Elem())
			v, into = p.Interface().(T), p.Interface()
		}
		err := k.UnmarshalWithConf("", into, koanf.UnmarshalConf{Tag: tag})
		return v, err
	}
}

// Get returns the value in force: a whole one, built and validated, never
// one being built. It costs one atomic load, no lock and no allocation.
// It is the zero T until Start has published one.
func (v *Value[T]) Get() T {
	if s := v.e.cur.Load(); s != nil {
		return s.v
	}
	var zero T
	return zero
}

// Koanf returns the koanf instance the value in force was built from; nil
// until Start has published one. Get and Koanf are two loads: a change may
// be published between them.
func (v *Value[T]) Koanf() *koanf.Koanf {
	_, k := v.e.get()
	return k
}

// Reload loads and builds the value again now, as a change would: for a
// SIGHUP or an admin endpoint. It returns why the new value was not
// published, if it was not; the one in force stays then.
func (v *Value[T]) Reload() error { return v.e.reload(v.spec()) }

// Subscribe asks for fn to be called after each value is published, with
// the one it replaced and the new one, until the returned func is called.
// It may be called before Start, which publishes the first value without
// telling subscribers. Calls are made one at a time, in order, by the
// goroutine that reloaded, before the replaced value is closed. fn may
// Subscribe, call a cancel and Close, as [Config.Subscribe]'s may; it must
// not call Reload or Shutdown, which wait for it.
func (v *Value[T]) Subscribe(fn func(old, new T)) (cancel func()) {
	return v.e.subscribe(fn)
}

// Stats returns a snapshot of what the value has done. It never waits for
// a reload under way.
func (v *Value[T]) Stats() Stats { return v.e.statsOf(v.spec) }

// Ready returns nil once a good value is in force, and an error matching
// ErrNotReady before, as [Config.Ready].
func (v *Value[T]) Ready() error { return ready(v.e.statsOf(v.spec)) }

// Close stops watching; the value in force stays readable, and is not
// closed. It does not wait for a reload under way: Shutdown does. A closed
// Value is not started again: Start and StartWait fail on it.
func (v *Value[T]) Close() error { return v.e.close() }

// Shutdown stops watching, and waits until every watched provider that
// can be waited for (file.File and file.FileSet can) has finished its last
// callback, or until ctx is done.
func (v *Value[T]) Shutdown(ctx context.Context) error { return v.e.shutdown(ctx) }
