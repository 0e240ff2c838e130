package live_test

import (
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/keepwatch/file"
	"github.com/keepwatch/file/live"
	"github.com/knadh/koanf/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Two live configs in one service, each with a push that does not parse:
// each record names its config (by Name, or by the path it watches) and
// the paths it watches, and says which path's change failed; the error
// names the config, so a parse error names the file of a config that has
// no Name.
func TestLogsNameTheConfig(t *testing.T) {
	dir := t.TempDir()
	policy, flags := filepath.Join(dir, "policy.yaml"), filepath.Join(dir, "flags.yaml")
	write(t, policy, "roles: {}\n")
	write(t, flags, "beta: false\n")
	logs := &logRecords{}
	var reported errorLog
	fp, ff := provider(t, policy), provider(t, flags)
	start(t, &live.Config{Name: "authz", Load: loadYAML(fp), Watch: []live.Watcher{fp}, OnError: reported.add, Logger: logs.logger()})
	start(t, &live.Value[map[string]any]{Load: loadYAML(ff), Watch: []live.Watcher{ff}, OnError: reported.add, Logger: logs.logger()})

	replace(t, policy, "roles: [\n")
	reported.waitLen(t, 1)
	replace(t, flags, "beta: [\n")
	errs := reported.waitLen(t, 2)

	warns := logs.records(slog.LevelWarn)
	require.Len(t, warns, 2)
	assert.Equal(t, map[string]string{
		"config": "authz", "paths": "[" + policy + "]", "reason": "change", "changed": policy, "error": errs[0].Error(),
	}, attrs(warns[0]))
	assert.Equal(t, map[string]string{
		"config": flags, "paths": "[" + flags + "]", "reason": "change", "changed": flags, "error": errs[1].Error(),
	}, attrs(warns[1]))
	assert.Regexp(t, `^keepwatch: config authz not loaded: yaml: `, errs[0].Error())
	assert.Regexp(t, `^keepwatch: config `+flags+` not loaded: yaml: `, errs[1].Error())

	for _, r := range logs.records(slog.LevelDebug) {
		assert.Contains(t, attrs(r), "config", "every record names its config: %s", r.Message)
		assert.Contains(t, attrs(r), "paths", "every record has the paths: %s", r.Message)
	}
}

// A failed Start is returned, naming the config, and nothing else: not
// logged, not told to OnError (the caller decides what to do with it).
// Every failure after Start is logged once and told to OnError once,
// whether or not OnError is set: OnError is in addition to the log.
func TestOnErrorIsToldOfEachFailureAfterStart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	write(t, path, "a: [\n")
	f := provider(t, path)
	logs := &logRecords{}
	var reported errorLog
	c := &live.Config{Load: loadYAML(f), Watch: []live.Watcher{f}, OnError: reported.add, Logger: logs.logger()}
	err := c.Start()
	require.Error(t, err)
	assert.Regexp(t, `^keepwatch: config `+path+` not loaded: yaml: `, err.Error())
	assert.Empty(t, reported.all(), "a failed Start is not told to OnError")
	assert.Empty(t, logs.at(slog.LevelDebug), "nor logged")
	st := c.Stats()
	assert.Zero(t, st.Rejected, "nor counted as a rejection: Start may be tried again")
	assert.False(t, st.LastSucceeded)
	assert.Equal(t, err, st.LastError, "but kept, for Ready")
	assert.ErrorIs(t, c.Ready(), live.ErrNotReady)

	write(t, path, "a: 1\n")
	start(t, c)
	replace(t, path, "a: [\n")
	errs := reported.waitLen(t, 1)
	assert.Equal(t, []string{loaded, noIdentity, notReloaded}, logs.at(slog.LevelDebug),
		"no identity told once, once a config is in force")
	assert.Equal(t, errs[0].Error(), attrs(logs.records(slog.LevelWarn)[0])["error"], "the log and OnError tell one error")
	err = c.Reload()
	require.Error(t, err, "a failed Reload is returned, logged and told")
	errs = reported.waitLen(t, 2)
	assert.Len(t, logs.at(slog.LevelWarn), 2)
	assert.Equal(t, err, errs[1])
	assert.Equal(t, err, c.Stats().LastError)
}

// A problem a watched provider calls back with is told to OnError. A
// provider that is not keepwatch's has it logged here (koanf's stock
// provider's watch ends with it); keepwatch's log their own, so it is not
// logged twice.
func TestProblemsOfWatchedProviders(t *testing.T) {
	t.Run("another provider", func(t *testing.T) {
		src := &source{data: "a: 1\n"}
		logs := &logRecords{}
		var reported errorLog
		start(t, &live.Config{Name: "remote", Load: loadYAML(src), Watch: []live.Watcher{src}, OnError: reported.add, Logger: logs.logger()})
		broken := errors.New("connection lost")
		src.fail(broken)
		assert.Equal(t, []error{broken}, reported.all())
		warns := logs.records(slog.LevelWarn)
		require.Len(t, warns, 1)
		assert.Equal(t, "keepwatch: a watched provider reports a problem", warns[0].Message)
		assert.Equal(t, map[string]string{"config": "remote", "paths": "[]", "provider": "*live_test.source", "error": "connection lost"}, attrs(warns[0]))
	})
	t.Run("keepwatch's", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "config.yaml")
		write(t, path, "a: 1\n")
		f := provider(t, path, file.WithErrorCallbacks())
		logs := &logRecords{}
		var reported errorLog
		start(t, &live.Config{Load: loadYAML(f), Watch: []live.Watcher{f}, OnError: reported.add, Logger: logs.logger()})
		require.NoError(t, os.Remove(path))
		errs := reported.waitLen(t, 1)
		assert.ErrorIs(t, errs[0], fs.ErrNotExist)
		assert.Equal(t, []string{loaded}, logs.at(slog.LevelInfo), "the provider logged it, to its own logger")
	})
}

// A config with nothing to watch starts, says once at WARN that it
// reloads only on Reload, and does.
func TestAConfigThatWatchesNothingSaysSo(t *testing.T) {
	src := &source{data: "a: 1\n"}
	logs := &logRecords{}
	c := start(t, &live.Config{Name: "env", Load: loadYAML(src), Logger: logs.logger()})
	warns := logs.records(slog.LevelWarn)
	require.Len(t, warns, 1)
	assert.Equal(t, "keepwatch: config watches nothing: it reloads only when Reload is called", warns[0].Message)
	assert.Equal(t, map[string]string{"config": "env", "paths": "[]"}, attrs(warns[0]))

	src.set("a: 2\n")
	require.NoError(t, c.Reload())
	assert.Equal(t, 2, c.Koanf().Int("a"))
	assert.Len(t, logs.records(slog.LevelWarn), 1)
}

// Stats marshal to JSON with the last error as its text.
func TestStatsMarshalJSON(t *testing.T) {
	src := &source{data: "a: 1\n"}
	c := start(t, &live.Config{Name: "x", Load: loadYAML(src), Watch: []live.Watcher{src},
		Validate: func(k *koanf.Koanf) error {
			if k.Int("a") > 1 {
				return errors.New("a: at most 1")
			}
			return nil
		}, Logger: testLogger(t)})
	src.push("a: 2\n")
	b, err := c.Stats().MarshalJSON()
	require.NoError(t, err)
	assert.Contains(t, string(b), `"Published":1,"Rejected":1,`)
	assert.Contains(t, string(b), `"LastError":"keepwatch: config x rejected: a: at most 1"`)
}

// A config with no Name that watches no file is named by its type, so that
// its records still say which config they are about.
func TestAnUnnamedConfigThatWatchesNoFileIsNamedByItsType(t *testing.T) {
	logs := &logRecords{}
	src := &source{data: "port: 1\n"}
	start(t, &live.Config{Load: loadYAML(src), Logger: logs.logger()})
	type App struct {
		Port int `koanf:"port"`
	}
	start(t, &live.Value[App]{Load: loadYAML(src), Logger: logs.logger()})
	warns := logs.records(slog.LevelWarn)
	require.Len(t, warns, 2)
	assert.Equal(t, "live.Config", attrs(warns[0])["config"])
	assert.Equal(t, "live.Value[live_test.App]", attrs(warns[1])["config"])
}

// Each reload that publishes its config is logged at INFO, with its
// reason and the config's generation, as Prometheus and nginx log theirs:
// Start's, each change's, Reload's, and the one that ends failures; a
// config that is not reloaded, at WARN.
func TestEachReloadIsLoggedAtInfo(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	write(t, path, "a: 1\n")
	f := provider(t, path)
	logs := &logRecords{}
	var reported errorLog
	c := start(t, &live.Config{Name: "app", Load: loadYAML(f), Watch: []live.Watcher{f}, OnError: reported.add, Logger: logs.logger()})
	replace(t, path, "a: 2\n")
	waitKoanf(t, c, func(k *koanf.Koanf) bool { return k.Int("a") == 2 })
	require.NoError(t, c.Reload())
	replace(t, path, "a: [\n")
	reported.waitLen(t, 1)
	replace(t, path, "a: 3\n")
	waitKoanf(t, c, func(k *koanf.Koanf) bool { return k.Int("a") == 3 })
	logs.waitAt(t, slog.LevelInfo, 5)

	var got []map[string]string
	for _, r := range logs.records(slog.LevelInfo) {
		a := attrs(r)
		delete(a, "paths")
		delete(a, "error")
		a["msg"] = r.Level.String() + " " + r.Message
		got = append(got, a)
	}
	assert.Equal(t, []map[string]string{
		{"msg": loaded, "config": "app", "generation": "1"},
		{"msg": reloaded, "config": "app", "reason": "change", "generation": "2", "changed": path},
		{"msg": reloaded, "config": "app", "reason": "request", "generation": "3"},
		{"msg": notReloaded, "config": "app", "reason": "change", "changed": path},
		{"msg": failureOver, "config": "app", "reason": "change", "generation": "4", "changed": path},
	}, got)
}
