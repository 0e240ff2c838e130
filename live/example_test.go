package live_test

import (
	"errors"
	"fmt"
	"log"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/keepwatch/file"
	"github.com/keepwatch/file/live"
	"github.com/knadh/koanf/parsers/yaml"
	"github.com/knadh/koanf/v2"
)

// A config that reloads itself: each change builds a fresh koanf instance
// and swaps it in whole, so a role revoked in the file is revoked in the
// service, and a request never sees a config in the middle of its load.
func Example() {
	path, cleanup := exampleFile("roles: {alice: [read, write], bob: [read]}\n")
	defer cleanup()

	policy := file.Provider(path)
	cfg := &live.Config{
		Load:  func(k *koanf.Koanf) error { return k.Load(policy, yaml.Parser()) },
		Watch: []live.Watcher{policy},
	}
	if err := cfg.Start(); err != nil {
		log.Fatal(err) // no good config to run on
	}
	defer cfg.Close()
	fmt.Println(cfg.Koanf().Exists("roles.bob"))

	reloaded := make(chan struct{}, 1)
	defer cfg.Subscribe(func(old, new *koanf.Koanf) { signal(reloaded) })()
	save(path, "roles: {alice: [read]}\n") // bob's role revoked
	<-reloaded

	k := cfg.Koanf() // what a request handler does: the config in force, whole
	fmt.Println(k.Exists("roles.bob"), k.Strings("roles.alice"))
	// Output:
	// true
	// false [read]
}

// A bad push leaves the last good config in force: one that does not
// parse, or one Validate rejects. The error names the config.
func ExampleConfig_validate() {
	path, cleanup := exampleFile("max_sessions: 10\n")
	defer cleanup()

	f := file.Provider(path)
	failed := make(chan error, 1)
	cfg := &live.Config{
		Name:  "sessions",
		Load:  func(k *koanf.Koanf) error { return k.Load(f, yaml.Parser()) },
		Watch: []live.Watcher{f},
		Validate: func(k *koanf.Koanf) error {
			if k.Int("max_sessions") < 1 {
				return errors.New("max_sessions must be at least 1")
			}
			return nil
		},
		OnError: func(err error) { failed <- err }, // besides the log: count, alert
		Logger:  slog.New(slog.DiscardHandler),     // the example shows no log
	}
	if err := cfg.Start(); err != nil {
		log.Fatal(err)
	}
	defer cfg.Close()

	save(path, "max_sessions: 0\n")
	err := <-failed
	fmt.Println(err)
	fmt.Println(errors.Is(err, live.ErrRejected), cfg.Koanf().Int("max_sessions"), cfg.Stats().Rejected)
	// Output:
	// keepwatch: config sessions rejected: max_sessions must be at least 1
	// true 10 1
}

// Policy is an authorization policy compiled for its readers: a lookup
// map, so that a request costs one map lookup rather than a walk of the
// koanf tree.
type Policy struct {
	grants map[string]bool // "user action"
}

// Allows reports whether the policy grants user the action.
func (p *Policy) Allows(user, action string) bool { return p.grants[user+" "+action] }

// compile builds a Policy from a fresh koanf instance.
func compile(k *koanf.Koanf) (*Policy, error) {
	p := &Policy{grants: map[string]bool{}}
	for _, user := range k.MapKeys("roles") {
		for _, action := range k.Strings("roles." + user) {
			p.grants[user+" "+action] = true
		}
	}
	return p, nil
}

// The struct a service reads, built from each change and published whole:
// an authorization policy compiled into a lookup map. A role revoked in
// the file is gone from the compiled policy, and a request reads the
// policy in force with one atomic load.
func ExampleValue() {
	path, cleanup := exampleFile("roles: {alice: [read, write], bob: [read]}\n")
	defer cleanup()

	f := file.Provider(path)
	authz := &live.Value[*Policy]{
		Name:  "authz",
		Load:  func(k *koanf.Koanf) error { return k.Load(f, yaml.Parser()) },
		Watch: []live.Watcher{f},
		Build: compile,
	}
	if err := authz.Start(); err != nil {
		log.Fatal(err)
	}
	defer authz.Close()
	fmt.Println("bob reads:", authz.Get().Allows("bob", "read"))

	published := make(chan struct{}, 1)
	defer authz.Subscribe(func(old, new *Policy) { signal(published) })()
	save(path, "roles: {alice: [read, write]}\n") // bob's role revoked
	<-published

	p := authz.Get() // in each request: the policy in force, for this request only
	fmt.Println("bob reads:", p.Allows("bob", "read"), "alice writes:", p.Allows("alice", "write"))
	// Output:
	// bob reads: true
	// bob reads: false alice writes: true
}

// Logging is the part of a service's config that sets its log level.
type Logging struct {
	Level slog.Level `koanf:"level"` // "debug", "info", ...: slog.Level parses them
}

// A subscriber applies a change where it takes effect: the log level goes
// to the slog.LevelVar the service's handler reads, so a change of the
// file changes what is logged, without a restart.
func ExampleValue_Subscribe() {
	path, cleanup := exampleFile("level: info\n")
	defer cleanup()

	var level slog.LevelVar
	logger := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{Level: &level, ReplaceAttr: noTime}))

	f := file.Provider(path)
	cfg := &live.Value[Logging]{
		Load:  func(k *koanf.Koanf) error { return k.Load(f, yaml.Parser()) },
		Watch: []live.Watcher{f},
	}
	applied := make(chan struct{}, 1)
	defer cfg.Subscribe(func(old, new Logging) { // before Start: no change is missed
		level.Set(new.Level)
		fmt.Println("log level:", old.Level, "->", new.Level)
		signal(applied)
	})()
	if err := cfg.Start(); err != nil {
		log.Fatal(err)
	}
	defer cfg.Close()
	level.Set(cfg.Get().Level) // the first value is not told to subscribers

	logger.Debug("not shown")
	save(path, "level: debug\n")
	<-applied
	logger.Debug("shown")
	// Output:
	// log level: INFO -> DEBUG
	// level=DEBUG msg=shown
}

// noTime drops the time from a record, for an example's fixed output.
func noTime(_ []string, a slog.Attr) slog.Attr {
	if a.Key == slog.TimeKey {
		return slog.Attr{}
	}
	return a
}

// signal tells a waiting example of a change, without ever blocking the
// reload on it.
func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// exampleFile makes a config file in a temporary directory.
func exampleFile(content string) (path string, cleanup func()) {
	dir, err := os.MkdirTemp("", "example")
	if err != nil {
		log.Fatal(err)
	}
	path = filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		log.Fatal(err)
	}
	return path, func() { os.RemoveAll(dir) }
}

// save replaces a file the way editors and kubelet do: write aside, rename.
func save(path, content string) {
	if err := os.WriteFile(path+".tmp", []byte(content), 0o644); err != nil {
		log.Fatal(err)
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		log.Fatal(err)
	}
}
