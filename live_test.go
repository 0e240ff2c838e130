package file

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/knadh/koanf/parsers/yaml"
	"github.com/knadh/koanf/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// startLive starts l and stops it, waiting, when the test ends.
func startLive(t *testing.T, l *Live) *Live {
	t.Helper()
	if l.Logger == nil {
		l.Logger = testLogger(t)
	}
	require.NoError(t, l.Start())
	t.Cleanup(func() {
		ctx, cancel := contextFor(waitFor)
		defer cancel()
		require.NoError(t, l.Shutdown(ctx))
	})
	return l
}

// waitLive waits until the config in force satisfies ok.
func waitLive(t *testing.T, l *Live, ok func(k *koanf.Koanf) bool) *koanf.Koanf {
	t.Helper()
	require.Eventually(t, func() bool { return ok(l.Koanf()) }, waitFor, tick,
		"config in force: %v; stats: %+v", l.Koanf().Raw(), l.Stats())
	return l.Koanf()
}

// The trap of koanf's reload pattern, and the way out: a role revoked in
// the file stays granted when the file is loaded again into the same
// instance, and is gone from the live config.
func TestARevokedRoleIsGoneFromTheLiveConfig(t *testing.T) {
	path := filepath.Join(t.TempDir(), "policy.yaml")
	write(t, path, "roles: {alice: [read, write], bob: [read]}\n")

	// koanf's README pattern, for the record: it keeps bob.
	stock := koanf.New(".")
	sf := Provider(path, WithLogger(testLogger(t)))
	require.NoError(t, stock.Load(sf, yaml.Parser()))
	reloaded := make(chan struct{}, 1)
	require.NoError(t, sf.Watch(func(any, error) {
		_ = stock.Load(sf, yaml.Parser())
		reloaded <- struct{}{}
	}))
	defer shutdown(t, sf)

	f := Provider(path, WithLogger(testLogger(t)))
	l := startLive(t, &Live{
		Load:  func(k *koanf.Koanf) error { return k.Load(f, yaml.Parser()) },
		Watch: []Watcher{f},
	})
	assert.True(t, l.Koanf().Exists("roles.bob"))

	replace(t, path, "roles: {alice: [read]}\n")
	k := waitLive(t, l, func(k *koanf.Koanf) bool { return !k.Exists("roles.bob") })
	assert.Equal(t, []string{"read"}, k.Strings("roles.alice"))
	<-reloaded
	assert.True(t, stock.Exists("roles.bob"), "koanf's pattern keeps the revoked role")
}

// A key removed from one file of a set, and a file removed from a conf.d
// set, take their keys with them.
func TestKeysRemovedFromASetAreGone(t *testing.T) {
	t.Run("a key of one file", func(t *testing.T) {
		dir := t.TempDir()
		write(t, filepath.Join(dir, "policy.yaml"), "allow: [a, b]\n")
		write(t, filepath.Join(dir, "roles.yaml"), "roles: {alice: admin, bob: viewer}\n")
		set := Set(dir, []string{"policy.yaml", "roles.yaml"}, yaml.Parser(), WithQuietWindow(20*time.Millisecond))
		l := startLive(t, &Live{Load: func(k *koanf.Koanf) error { return k.Load(set, nil) }, Watch: []Watcher{set}})
		replace(t, filepath.Join(dir, "roles.yaml"), "roles: {alice: admin}\n")
		k := waitLive(t, l, func(k *koanf.Koanf) bool { return !k.Exists("roles.bob") })
		assert.Equal(t, "admin", k.String("roles.alice"))
		assert.Equal(t, []string{"a", "b"}, k.Strings("allow"))
	})
	t.Run("a file of a conf.d set", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "conf.d")
		require.NoError(t, os.Mkdir(dir, 0o755))
		write(t, filepath.Join(dir, "10-base.yaml"), "name: app\n")
		write(t, filepath.Join(dir, "20-beta.yaml"), "beta: {search: true}\n")
		set := Glob(filepath.Join(dir, "*.yaml"), yaml.Parser(), WithQuietWindow(20*time.Millisecond))
		l := startLive(t, &Live{Load: func(k *koanf.Koanf) error { return k.Load(set, nil) }, Watch: []Watcher{set}})
		require.True(t, l.Koanf().Bool("beta.search"))
		require.NoError(t, os.Remove(filepath.Join(dir, "20-beta.yaml")))
		k := waitLive(t, l, func(k *koanf.Koanf) bool { return !k.Exists("beta") })
		assert.Equal(t, "app", k.String("name"))
	})
}

// A kubelet volume with two keys whose values must agree, updated 500
// times back to back by kubelet's steps while four readers check every
// config they fetch: none is a mix, and the last generation arrives.
func TestReadersNeverSeeAMixedConfig(t *testing.T) {
	payload := func(n int) map[string]string {
		return map[string]string{
			"policy.yaml": fmt.Sprintf("policy: {generation: %d}\n", n),
			"roles.yaml":  fmt.Sprintf("roles: {generation: %d}\n", n),
		}
	}
	v := newVolume(t, filepath.Join(t.TempDir(), "authz"), payload(0))
	set := Set(v.v.Dir, []string{"policy.yaml", "roles.yaml"}, yaml.Parser())
	l := startLive(t, &Live{Load: func(k *koanf.Koanf) error { return k.Load(set, nil) }, Watch: []Watcher{set}})

	var mixed, checked atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				k := l.Koanf()
				if k.Int("policy.generation") != k.Int("roles.generation") {
					mixed.Add(1)
				}
				checked.Add(1)
			}
		})
	}
	const updates = 500
	for i := 1; i <= updates; i++ {
		v.update(payload(i))
	}
	waitLive(t, l, func(k *koanf.Koanf) bool { return k.Int("policy.generation") == updates })
	close(stop)
	wg.Wait()
	assert.Zero(t, mixed.Load(), "mixed configs among %d fetched", checked.Load())
	st := l.Stats()
	t.Logf("%d updates, %d configs published, %d fetches checked, %d mixed", updates, st.Published, checked.Load(), mixed.Load())
	assert.Zero(t, st.Rejected)
}

// A push that does not parse, and one that Validate rejects, leave the
// last good config in force; each is reported once, and the next good push
// is applied.
func TestABadPushKeepsTheLastGoodConfig(t *testing.T) {
	path := filepath.Join(t.TempDir(), "policy.yaml")
	write(t, path, "max_sessions: 10\n")
	f := Provider(path, WithLogger(testLogger(t)))
	var reported []error
	var mu sync.Mutex
	logs := &logRecords{}
	l := startLive(t, &Live{
		Load:  func(k *koanf.Koanf) error { return k.Load(f, yaml.Parser()) },
		Watch: []Watcher{f},
		Validate: func(k *koanf.Koanf) error {
			if k.Int("max_sessions") <= 0 {
				return errors.New("max_sessions must be positive")
			}
			return nil
		},
		OnError: func(err error) {
			mu.Lock()
			defer mu.Unlock()
			reported = append(reported, err)
		},
		Logger: slogOf(logs),
	})
	errs := func() []error {
		mu.Lock()
		defer mu.Unlock()
		return append([]error(nil), reported...)
	}

	replace(t, path, "max_sessions: [\n") // does not parse
	require.Eventually(t, func() bool { return len(errs()) == 1 }, waitFor, tick)
	assert.Equal(t, 10, l.Koanf().Int("max_sessions"), "the last good config stays")
	replace(t, path, "max_sessions: 20\n")
	waitLive(t, l, func(k *koanf.Koanf) bool { return k.Int("max_sessions") == 20 })

	replace(t, path, "max_sessions: 0\n") // parses, but Validate rejects it
	require.Eventually(t, func() bool { return len(errs()) == 2 }, waitFor, tick)
	assert.ErrorIs(t, errs()[1], ErrConfigRejected)
	assert.ErrorContains(t, errs()[1], "max_sessions must be positive")
	assert.Equal(t, 20, l.Koanf().Int("max_sessions"))
	replace(t, path, "max_sessions: 30\n")
	waitLive(t, l, func(k *koanf.Koanf) bool { return k.Int("max_sessions") == 30 })

	sentinelLive(t, l, path)
	assert.Len(t, errs(), 2, "each bad push reported once")
	st := l.Stats()
	assert.Equal(t, uint64(2), st.Rejected)
	assert.ErrorIs(t, st.LastError, ErrConfigRejected)
	assert.Equal(t, []string{
		"WARN keepwatch: config not reloaded, the last good one stays in force",
		"INFO keepwatch: config reloaded, the failure is over",
		"WARN keepwatch: config not reloaded, the last good one stays in force",
		"INFO keepwatch: config reloaded, the failure is over",
	}, logs.at(slog.LevelInfo))
}

// sentinelLive makes a last good change and waits for it, so that anything
// on its way for earlier changes has arrived.
func sentinelLive(t *testing.T, l *Live, path string) {
	t.Helper()
	replace(t, path, "max_sessions: 99\nsentinel: true\n")
	waitLive(t, l, func(k *koanf.Koanf) bool { return k.Bool("sentinel") })
}

// Subscribers are told of each published config, with the one it replaced.
func TestSubscribersGetTheOldAndTheNewConfig(t *testing.T) {
	path := filepath.Join(t.TempDir(), "flags.yaml")
	write(t, path, "beta: false\n")
	f := Provider(path, WithLogger(testLogger(t)))
	l := startLive(t, &Live{Load: func(k *koanf.Koanf) error { return k.Load(f, yaml.Parser()) }, Watch: []Watcher{f}})
	changes := make(chan [2]bool, 4)
	cancel := l.Subscribe(func(old, new *koanf.Koanf) { changes <- [2]bool{old.Bool("beta"), new.Bool("beta")} })
	replace(t, path, "beta: true\n")
	assert.Equal(t, [2]bool{false, true}, <-changes)
	cancel()
	replace(t, path, "beta: false\n")
	waitLive(t, l, func(k *koanf.Koanf) bool { return !k.Bool("beta") })
	assert.Empty(t, changes, "not after cancel")

	require.NoError(t, l.Reload(), "a reload on request")
	assert.Equal(t, uint64(4), l.Stats().Published, "the first, two changes, and the reload")
}

// A first load that fails fails Start: there is no good config to run on,
// and nothing is watched.
func TestStartFailsOnABadFirstLoad(t *testing.T) {
	path := filepath.Join(t.TempDir(), "policy.yaml")
	write(t, path, "a: [\n")
	f := Provider(path, WithLogger(testLogger(t)))
	l := &Live{Load: func(k *koanf.Koanf) error { return k.Load(f, yaml.Parser()) }, Watch: []Watcher{f}, Logger: testLogger(t)}
	require.Error(t, l.Start())
	assert.Nil(t, l.Koanf())
	assert.Equal(t, ModeStopped, f.Stats().Mode)
	assert.ErrorIs(t, (&Live{}).Start(), errNoLoad)
}

// Many live configs and files, one inotify instance.
func TestLiveConfigsShareTheInotifyInstance(t *testing.T) {
	before := countInotify(t)
	for range 5 {
		path := filepath.Join(t.TempDir(), "c.yaml")
		write(t, path, "a: 1\n")
		f := Provider(path, WithLogger(testLogger(t)))
		startLive(t, &Live{Load: func(k *koanf.Koanf) error { return k.Load(f, yaml.Parser()) }, Watch: []Watcher{f}})
	}
	assert.Equal(t, before+1, countInotify(t))
}
