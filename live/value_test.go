package live_test

import (
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/keepwatch/file"
	"github.com/keepwatch/file/live"
	"github.com/knadh/koanf/parsers/yaml"
	"github.com/knadh/koanf/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// waitValue waits until the value in force satisfies ok.
func waitValue[T any](t *testing.T, v *live.Value[T], ok func(T) bool) T {
	t.Helper()
	require.Eventually(t, func() bool { return ok(v.Get()) }, waitFor, tick,
		"value in force: %+v; stats: %+v", v.Get(), v.Stats())
	return v.Get()
}

type roles struct {
	Roles map[string][]string `koanf:"roles"`
}

// A role revoked in a ConfigMap is gone from the typed value: the default
// Build unmarshals each fresh koanf instance into a new T.
func TestARevokedRoleIsGoneFromTheTypedValue(t *testing.T) {
	v := newVolume(t, filepath.Join(t.TempDir(), "authz"),
		map[string]string{"roles.yaml": "roles: {alice: [read, write], bob: [read]}\n"})
	f := provider(t, v.v.Path("roles.yaml"))
	authz := start(t, &live.Value[roles]{Load: loadYAML(f), Watch: []live.Watcher{f}, Logger: testLogger(t)})
	require.Equal(t, []string{"read"}, authz.Get().Roles["bob"])

	v.update(map[string]string{"roles.yaml": "roles: {alice: [read]}\n"})
	got := waitValue(t, authz, func(r roles) bool { _, bob := r.Roles["bob"]; return !bob })
	assert.Equal(t, map[string][]string{"alice": {"read"}}, got.Roles)
	assert.False(t, authz.Koanf().Exists("roles.bob"), "the koanf instance is published with the value")
}

type limits struct {
	MaxSessions int    `koanf:"max_sessions"`
	Mode        string `koanf:"mode"`
}

// A push that does not parse, one that does not build (a key of the
// wrong type), and one Validate rejects each leave the last good value in
// force; each is logged, counted and told to OnError once, and the next
// good push is applied.
func TestABadPushKeepsTheLastGoodValue(t *testing.T) {
	v := newVolume(t, filepath.Join(t.TempDir(), "limits"), map[string]string{"limits.yaml": "max_sessions: 10\n"})
	f := provider(t, v.v.Path("limits.yaml"))
	var reported errorLog
	logs := &logRecords{}
	val := start(t, &live.Value[*limits]{
		Load:  loadYAML(f),
		Watch: []live.Watcher{f},
		Validate: func(l *limits) error {
			if l.MaxSessions <= 0 {
				return errors.New("max_sessions must be positive")
			}
			return nil
		},
		OnError: reported.add,
		Logger:  logs.logger(),
	})
	first := val.Get()
	require.Equal(t, 10, first.MaxSessions)

	bad := []struct{ push, says string }{
		{"max_sessions: [\n", "not loaded"},
		{"max_sessions: many\n", "not built"},
		{"max_sessions: 0\n", "rejected: max_sessions must be positive"},
	}
	for i, b := range bad {
		v.update(map[string]string{"limits.yaml": b.push})
		errs := reported.waitLen(t, i+1)
		assert.ErrorContains(t, errs[i], b.says)
		assert.Equal(t, i == 2, errors.Is(errs[i], live.ErrRejected), "only Validate's is a rejection: %v", errs[i])
		assert.Same(t, first, val.Get(), "the last good value stays, the very same")
	}
	v.update(map[string]string{"limits.yaml": "max_sessions: 20\nmode: strict\n"})
	got := waitValue(t, val, func(l *limits) bool { return l.MaxSessions == 20 })
	assert.Equal(t, "strict", got.Mode)
	assert.Equal(t, 10, first.MaxSessions, "a published value is never changed")

	st := val.Stats()
	assert.Equal(t, uint64(3), st.Rejected)
	assert.Equal(t, uint64(2), st.Published)
	assert.Len(t, reported.all(), 3, "each bad push told once")
	assert.Equal(t, []string{loaded, notReloaded, notReloaded, notReloaded, failureOver}, logs.waitAt(t, slog.LevelInfo, 5))
}

// generations is a value whose fields must agree: both keys of one
// kubelet update, and a list whose length their generation sets.
type generations struct {
	Policy struct {
		Generation int `koanf:"generation"`
	} `koanf:"policy"`
	Roles struct {
		Generation int      `koanf:"generation"`
		Users      []string `koanf:"users"`
	} `koanf:"roles"`
}

func (g generations) agree() bool {
	n := g.Policy.Generation
	return g.Roles.Generation == n && len(g.Roles.Users) == n%5+1
}

// Readers under -race never see a half-built value: a kubelet volume of
// two keys, updated 300 times, each update published before the next is
// made, while two readers (one a core here) check every value they get. The subscriber
// sees each publication once, in order: each old value is the previous
// new one.
func TestReadersNeverSeeAHalfBuiltValue(t *testing.T) {
	v := newVolume(t, filepath.Join(t.TempDir(), "authz"), twoKeys(0))
	set := file.Set(v.v.Dir, []string{"policy.yaml", "roles.yaml"}, yaml.Parser(), file.WithLogger(testLogger(t)))
	val := start(t, &live.Value[generations]{Load: func(k *koanf.Koanf) error { return k.Load(set, nil) },
		Watch: []live.Watcher{set}, Logger: testLogger(t)})
	require.True(t, val.Get().agree())

	var seen []int // generations published, as the subscriber saw them
	var broken atomic.Int64
	published := make(chan int, 1)
	defer val.Subscribe(func(old, new generations) {
		if len(seen) > 0 && old.Policy.Generation != seen[len(seen)-1] || !old.agree() || !new.agree() {
			broken.Add(1)
		}
		seen = append(seen, new.Policy.Generation)
		published <- new.Policy.Generation
	})()

	const updates = 300
	reads, mixed := readWhile(t, 2, func() bool { return val.Get().agree() }, func() {
		for i := 1; i <= updates; i++ {
			v.update(twoKeys(i))
			select {
			case <-published:
			case <-time.After(waitFor):
				t.Fatalf("update %d not published", i)
			}
		}
	})
	st := val.Stats()
	t.Logf("%d updates, %d values published, %d reads, %d mixed", updates, st.Published-1, reads, mixed)
	assert.Zero(t, mixed, "half-built values among %d read", reads)
	assert.Zero(t, st.Rejected)
	assert.Zero(t, broken.Load(), "subscriber calls out of order: %v", seen)
	assert.True(t, slices.IsSorted(seen), "published out of order: %v", seen)
	assert.Equal(t, updates, int(st.Published-1), "every update published")
	assert.Equal(t, updates, len(seen), "one call per publication after the first")
}

// Subscribers run one at a time, in the order they subscribed, for each
// publication in turn; a cancelled one is called no more.
func TestSubscribersRunInOrder(t *testing.T) {
	src := &source{data: "n: 0\n"}
	val := start(t, &live.Value[int]{
		Load:   loadYAML(src),
		Watch:  []live.Watcher{src},
		Build:  func(k *koanf.Koanf) (int, error) { return k.Int("n"), nil },
		Logger: testLogger(t),
	})
	var calls []string
	subscribe := func(name string) func() {
		return val.Subscribe(func(old, new int) { calls = append(calls, fmt.Sprintf("%s:%d->%d", name, old, new)) })
	}
	cancelA := subscribe("a")
	defer subscribe("b")()
	src.push("n: 1\n")
	src.push("n: 2\n")
	cancelA()
	src.push("n: 3\n")
	assert.Equal(t, []string{"a:0->1", "b:0->1", "a:1->2", "b:1->2", "b:2->3"}, calls)
}

// pool is a value that holds a resource: a client for a DSN.
type pool struct {
	dsn      string
	closed   atomic.Bool
	closeErr error
}

func (p *pool) Close() error {
	if p.closed.Swap(true) {
		panic("closed twice")
	}
	return p.closeErr
}

// A replaced value that is an io.Closer is closed after the swap and after
// the subscribers have returned; not when the new value is the same one
// (a Build that reuses what did not change), and never the one in force.
// A value Validate rejects is closed too.
func TestAReplacedValueIsClosed(t *testing.T) {
	src := &source{data: "dsn: a\n"}
	logs := &logRecords{}
	var built []*pool
	var val *live.Value[*pool] // Build reads the value in force
	val = &live.Value[*pool]{
		Load:  loadYAML(src),
		Watch: []live.Watcher{src},
		Build: func(k *koanf.Koanf) (*pool, error) {
			if cur := val.Get(); cur != nil && cur.dsn == k.String("dsn") {
				return cur, nil // nothing changed for the pool: keep it
			}
			p := &pool{dsn: k.String("dsn")}
			if k.Bool("fail_close") {
				p.closeErr = errors.New("connection reset")
			}
			built = append(built, p)
			return p, nil
		},
		Validate: func(p *pool) error {
			if p.dsn == "invalid" {
				return errors.New("dsn: not a DSN")
			}
			return nil
		},
		Logger: logs.logger(),
	}
	start(t, val)
	var closedAtCall []bool
	defer val.Subscribe(func(old, new *pool) { closedAtCall = append(closedAtCall, old.closed.Load()) })()
	a := val.Get()

	src.push("dsn: b\n")
	b := val.Get()
	assert.True(t, a.closed.Load(), "replaced: closed")
	assert.False(t, b.closed.Load())

	src.push("dsn: b\nother: 1\n")
	assert.Same(t, b, val.Get(), "the same pool, in a new publication")
	assert.False(t, b.closed.Load(), "the new value is the same one: not closed")

	src.push("dsn: invalid\n")
	assert.Same(t, b, val.Get())
	require.Len(t, built, 3)
	assert.True(t, built[2].closed.Load(), "a rejected value is closed")
	assert.False(t, b.closed.Load(), "the one in force is not")

	src.push("dsn: c\nfail_close: true\n")
	src.push("dsn: d\n")
	c := built[3]
	assert.True(t, c.closed.Load())
	assert.Equal(t, []bool{false, false, false, false}, closedAtCall, "closed only after the subscribers returned")
	assert.Equal(t, []string{loaded, reloaded, reloaded, notReloaded, failureOver, reloaded,
		"WARN keepwatch: closing a replaced value failed"}, logs.at(slog.LevelInfo))

	require.NoError(t, val.Close())
	assert.False(t, val.Get().closed.Load(), "Close leaves the value in force to its readers")
}

// mapCloser is a closer == cannot compare: its replacement is closed all
// the same, without a panic.
type mapCloser struct {
	m      map[string]int
	closes *atomic.Int64
}

func (c mapCloser) Close() error {
	c.closes.Add(1)
	return nil
}

func TestAnIncomparableCloserIsClosed(t *testing.T) {
	src := &source{data: "n: 1\n"}
	var closes atomic.Int64
	val := start(t, &live.Value[mapCloser]{
		Load:  loadYAML(src),
		Watch: []live.Watcher{src},
		Build: func(k *koanf.Koanf) (mapCloser, error) {
			return mapCloser{map[string]int{"n": k.Int("n")}, &closes}, nil
		},
		Logger: testLogger(t),
	})
	src.push("n: 2\n")
	assert.Equal(t, 2, val.Get().m["n"])
	assert.Equal(t, int64(1), closes.Load())
}

// The default Build unmarshals into a new T when T is a pointer, matching
// fields by Tag.
func TestTheDefaultBuild(t *testing.T) {
	type server struct {
		Port int    `yaml:"port"`
		Host string `yaml:"host"`
	}
	src := &source{data: "port: 8080\nhost: example.org\n"}
	val := start(t, &live.Value[*server]{Load: loadYAML(src), Watch: []live.Watcher{src}, Tag: "yaml", Logger: testLogger(t)})
	first := val.Get()
	assert.Equal(t, &server{Port: 8080, Host: "example.org"}, first)
	src.push("port: 9090\n")
	assert.Equal(t, &server{Port: 9090}, val.Get(), "a removed key is gone")
	assert.Equal(t, 8080, first.Port, "into a new one: the old one never changes")
	assert.Equal(t, 9090, val.Koanf().Int("port"))
}
