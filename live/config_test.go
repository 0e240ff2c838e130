package live_test

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"sync"
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

// waitKoanf waits until the config in force satisfies ok.
func waitKoanf(t *testing.T, c *live.Config, ok func(k *koanf.Koanf) bool) *koanf.Koanf {
	t.Helper()
	require.Eventually(t, func() bool { return ok(c.Koanf()) }, waitFor, tick,
		"config in force: %v; stats: %+v", c.Koanf().Raw(), c.Stats())
	return c.Koanf()
}

// The trap of koanf's reload pattern, and the way out: a role revoked in
// the file stays granted when the file is loaded again into the same
// instance, and is gone from the live config.
func TestARevokedRoleIsGoneFromTheLiveConfig(t *testing.T) {
	path := filepath.Join(t.TempDir(), "policy.yaml")
	write(t, path, "roles: {alice: [read, write], bob: [read]}\n")

	// koanf's README pattern, for the record: it keeps bob.
	stock := koanf.New(".")
	sf := provider(t, path)
	require.NoError(t, stock.Load(sf, yaml.Parser()))
	reloaded := make(chan struct{}, 1)
	require.NoError(t, sf.Watch(func(any, error) {
		_ = stock.Load(sf, yaml.Parser())
		reloaded <- struct{}{}
	}))

	f := provider(t, path)
	c := start(t, &live.Config{Load: loadYAML(f), Watch: []live.Watcher{f}, Logger: testLogger(t)})
	assert.True(t, c.Koanf().Exists("roles.bob"))

	replace(t, path, "roles: {alice: [read]}\n")
	k := waitKoanf(t, c, func(k *koanf.Koanf) bool { return !k.Exists("roles.bob") })
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
		set := file.Set(dir, []string{"policy.yaml", "roles.yaml"}, yaml.Parser(),
			file.WithQuietWindow(20*time.Millisecond), file.WithLogger(testLogger(t)))
		c := start(t, &live.Config{Load: func(k *koanf.Koanf) error { return k.Load(set, nil) },
			Watch: []live.Watcher{set}, Logger: testLogger(t)})
		replace(t, filepath.Join(dir, "roles.yaml"), "roles: {alice: admin}\n")
		k := waitKoanf(t, c, func(k *koanf.Koanf) bool { return !k.Exists("roles.bob") })
		assert.Equal(t, "admin", k.String("roles.alice"))
		assert.Equal(t, []string{"a", "b"}, k.Strings("allow"))
	})
	t.Run("a file of a conf.d set", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "conf.d")
		require.NoError(t, os.Mkdir(dir, 0o755))
		write(t, filepath.Join(dir, "10-base.yaml"), "name: app\n")
		write(t, filepath.Join(dir, "20-beta.yaml"), "beta: {search: true}\n")
		set := file.Glob(filepath.Join(dir, "*.yaml"), yaml.Parser(),
			file.WithQuietWindow(20*time.Millisecond), file.WithLogger(testLogger(t)))
		c := start(t, &live.Config{Load: func(k *koanf.Koanf) error { return k.Load(set, nil) },
			Watch: []live.Watcher{set}, Logger: testLogger(t)})
		require.True(t, c.Koanf().Bool("beta.search"))
		require.NoError(t, os.Remove(filepath.Join(dir, "20-beta.yaml")))
		k := waitKoanf(t, c, func(k *koanf.Koanf) bool { return !k.Exists("beta") })
		assert.Equal(t, "app", k.String("name"))
	})
}

// twoKeys is a kubelet payload of two keys whose generations must agree.
func twoKeys(n int) map[string]string {
	return map[string]string{
		"policy.yaml": fmt.Sprintf("policy: {generation: %d}\n", n),
		"roles.yaml":  fmt.Sprintf("roles: {generation: %d, users: [%s]}\n", n, users(n)),
	}
}

// users is the roles' user list of generation n: n%5+1 names.
func users(n int) string {
	s := "u0"
	for i := 1; i <= n%5; i++ {
		s += fmt.Sprintf(", u%d", i)
	}
	return s
}

// A kubelet volume with two keys whose values must agree, updated 500
// times back to back by kubelet's steps while four readers check every
// config they fetch: none is a mix, and the last generation arrives.
func TestReadersNeverSeeAMixedConfig(t *testing.T) {
	v := newVolume(t, filepath.Join(t.TempDir(), "authz"), twoKeys(0))
	set := file.Set(v.v.Dir, []string{"policy.yaml", "roles.yaml"}, yaml.Parser(), file.WithLogger(testLogger(t)))
	c := start(t, &live.Config{Load: func(k *koanf.Koanf) error { return k.Load(set, nil) },
		Watch: []live.Watcher{set}, Logger: testLogger(t)})

	const updates = 500
	checked, mixed := readWhile(t, 4, func() bool {
		k := c.Koanf()
		return k.Int("policy.generation") == k.Int("roles.generation")
	}, func() {
		for i := 1; i <= updates; i++ {
			v.update(twoKeys(i))
		}
		waitKoanf(t, c, func(k *koanf.Koanf) bool { return k.Int("policy.generation") == updates })
	})
	assert.Zero(t, mixed, "mixed configs among %d fetched", checked)
	st := c.Stats()
	t.Logf("%d updates, %d configs published, %d fetches checked, %d mixed", updates, st.Published, checked, mixed)
	assert.Zero(t, st.Rejected)
}

// readWhile runs readers goroutines that call agree in a loop while write
// runs, and returns how many reads they made and how many disagreed.
func readWhile(t *testing.T, readers int, agree func() bool, write func()) (reads, mixed int64) {
	t.Helper()
	var nMixed, nReads atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range readers {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if !agree() {
					nMixed.Add(1)
				}
				nReads.Add(1)
				runtime.Gosched() // leave the reloads their share of 2 cores
			}
		})
	}
	defer wg.Wait()
	defer close(stop)
	write()
	return nReads.Load(), nMixed.Load()
}

// positive is a Validate that wants max_sessions above zero.
func positive(k *koanf.Koanf) error {
	if k.Int("max_sessions") <= 0 {
		return errors.New("max_sessions must be positive")
	}
	return nil
}

// A push that does not parse, and one that Validate rejects, leave the
// last good config in force; each is reported once, and the next good push
// is applied.
func TestABadPushKeepsTheLastGoodConfig(t *testing.T) {
	path := filepath.Join(t.TempDir(), "policy.yaml")
	write(t, path, "max_sessions: 10\n")
	f := provider(t, path)
	var reported errorLog
	logs := &logRecords{}
	c := start(t, &live.Config{Load: loadYAML(f), Watch: []live.Watcher{f}, Validate: positive,
		OnError: reported.add, Logger: logs.logger()})

	replace(t, path, "max_sessions: [\n") // does not parse
	reported.waitLen(t, 1)
	assert.Equal(t, 10, c.Koanf().Int("max_sessions"), "the last good config stays")
	replace(t, path, "max_sessions: 20\n")
	waitKoanf(t, c, func(k *koanf.Koanf) bool { return k.Int("max_sessions") == 20 })

	replace(t, path, "max_sessions: 0\n") // parses, but Validate rejects it
	errs := reported.waitLen(t, 2)
	assert.ErrorIs(t, errs[1], live.ErrRejected)
	assert.NotErrorIs(t, errs[0], live.ErrRejected, "a parse failure is not a rejection")
	assert.ErrorContains(t, errs[1], "max_sessions must be positive")
	assert.Equal(t, 20, c.Koanf().Int("max_sessions"))
	replace(t, path, "max_sessions: 30\n")
	waitKoanf(t, c, func(k *koanf.Koanf) bool { return k.Int("max_sessions") == 30 })

	replace(t, path, "max_sessions: 99\nsentinel: true\n") // all before it has arrived
	waitKoanf(t, c, func(k *koanf.Koanf) bool { return k.Bool("sentinel") })
	assert.Len(t, reported.all(), 2, "each bad push reported once")
	st := c.Stats()
	assert.Equal(t, uint64(2), st.Rejected)
	assert.ErrorIs(t, st.LastError, live.ErrRejected)
	assert.Equal(t, []string{loaded, notReloaded, failureOver, notReloaded, failureOver, reloaded},
		logs.waitAt(t, slog.LevelInfo, 6), "one record for each reload, at INFO")
}

// Subscribers are told of each published config, with the one it replaced.
func TestSubscribersGetTheOldAndTheNewConfig(t *testing.T) {
	path := filepath.Join(t.TempDir(), "flags.yaml")
	write(t, path, "beta: false\n")
	f := provider(t, path)
	c := start(t, &live.Config{Load: loadYAML(f), Watch: []live.Watcher{f}, Logger: testLogger(t)})
	changes := make(chan [2]bool, 4)
	cancel := c.Subscribe(func(old, new *koanf.Koanf) { changes <- [2]bool{old.Bool("beta"), new.Bool("beta")} })
	replace(t, path, "beta: true\n")
	assert.Equal(t, [2]bool{false, true}, <-changes)
	cancel()
	replace(t, path, "beta: false\n")
	waitKoanf(t, c, func(k *koanf.Koanf) bool { return !k.Bool("beta") })
	assert.Empty(t, changes, "not after cancel")

	require.NoError(t, c.Reload(), "a reload on request")
	assert.Equal(t, uint64(4), c.Stats().Published, "the first, two changes, and the reload")
}

// A first load that fails fails Start: there is no good config to run on,
// and nothing is watched. Start can be called again once the file is
// fixed, and only once it succeeded.
func TestStartFailsOnABadFirstLoad(t *testing.T) {
	path := filepath.Join(t.TempDir(), "policy.yaml")
	write(t, path, "a: [\n")
	f := provider(t, path)
	c := &live.Config{Load: loadYAML(f), Watch: []live.Watcher{f}, Logger: testLogger(t)}
	require.Error(t, c.Start())
	assert.Nil(t, c.Koanf())
	assert.Equal(t, file.ModeStopped, f.Stats().Mode)
	assert.EqualError(t, (&live.Config{Name: "authz"}).Start(), "keepwatch: config authz: no Load")
	assert.EqualError(t, (&live.Config{}).Start(), "keepwatch: config live.Config: no Load")
	assert.EqualError(t, c.Reload(), "keepwatch: config "+path+": not started, or closed")

	write(t, path, "a: 1\n")
	start(t, c)
	assert.Equal(t, 1, c.Koanf().Int("a"))
	assert.EqualError(t, c.Start(), "keepwatch: config "+path+": already started")
	require.NoError(t, c.Close())
	assert.EqualError(t, c.Start(), "keepwatch: config "+path+": closed: a config is started once")
	assert.EqualError(t, c.StartWait(t.Context()), "keepwatch: config "+path+": closed: a config is started once")
}

// Many live configs and files, one inotify instance.
func TestLiveConfigsShareTheInotifyInstance(t *testing.T) {
	before := countInotify(t)
	for range 5 {
		path := filepath.Join(t.TempDir(), "c.yaml")
		write(t, path, "a: 1\n")
		f := provider(t, path)
		start(t, &live.Config{Load: loadYAML(f), Watch: []live.Watcher{f}, Logger: testLogger(t)})
	}
	assert.Equal(t, before+1, countInotify(t))
}
