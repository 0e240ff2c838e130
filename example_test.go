package file_test

import (
	"encoding/json"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"sync/atomic"

	"github.com/fsnotify/fsnotify"
	"github.com/keepwatch/file"
)

// The provider on its own: each change is read in the callback, decoded
// into a fresh value and swapped in, and content that does not decode
// leaves the config in force. With koanf, the callback loads a fresh
// koanf instance the same way (the README's program; package live does it
// for you). Loading into the instance it already has, as koanf's own
// README does, merges: a key removed from the file would stay.
func ExampleProvider() {
	path, cleanup := exampleFile(`{"greeting": "hello", "shout": true}`)
	defer cleanup()

	type Config struct {
		Greeting string
		Shout    bool
	}
	f := file.Provider(path)
	load := func() (*Config, error) {
		data, err := f.ReadBytes() // in the callback: the content it fired for
		if err != nil {
			return nil, err
		}
		c := new(Config)
		return c, json.Unmarshal(data, c)
	}
	var cfg atomic.Pointer[Config]
	c, err := load()
	if err != nil {
		log.Fatal(err)
	}
	cfg.Store(c)

	reloaded := make(chan fsnotify.Op, 1)
	if err := f.Watch(func(event any, err error) {
		if err != nil {
			return // only with WithErrorCallbacks: a problem, and the watch goes on
		}
		c, err := load()
		if err != nil {
			log.Printf("config reload: %v", err) // keep the config in force
			return
		}
		cfg.Store(c)
		select { // never block the watch on a reader that may be gone
		case reloaded <- event.(fsnotify.Event).Op:
		default:
		}
	}); err != nil {
		log.Fatal(err)
	}
	defer f.Unwatch()

	save(path, `{"greeting": "hello again"}`) // shout removed
	op := <-reloaded
	fmt.Println(op, cfg.Load().Greeting, cfg.Load().Shout)
	// Output: WRITE hello again false
}

// jsonParser is a Parser: it parses each file of a set. koanf's parsers,
// json.Parser() and yaml.Parser() of koanf v1 or v2, are Parsers as they
// are, and a set is loaded into koanf with k.Load(set, nil).
type jsonParser struct{}

func (jsonParser) Unmarshal(b []byte) (map[string]any, error) {
	var m map[string]any
	return m, json.Unmarshal(b, &m)
}

func (jsonParser) Marshal(m map[string]any) ([]byte, error) { return json.Marshal(m) }

// The keys of one ConfigMap read as one: in a kubelet volume every read of
// the set goes through one resolution of ..data, so a policy and the roles
// it names always come from the same update. package live's Config
// example loads a set into koanf.
func ExampleSet() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	_ = os.WriteFile(filepath.Join(dir, "policy.json"), []byte(`{"policy": {"admins": "ops"}}`), 0o644)
	_ = os.WriteFile(filepath.Join(dir, "roles.json"), []byte(`{"roles": {"ops": ["alice"]}}`), 0o644)

	authz := file.Set(dir, []string{"policy.json", "roles.json"}, jsonParser{}) // or json.Parser()
	// What k.Load(authz, nil) loads:
	m, err := authz.Read()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(m["policy"], m["roles"])
	// Output: map[admins:ops] map[ops:[alice]]
}

// A conf.d directory watched as one config: its files merge in lexical
// order, and a file removed takes its keys with it.
func ExampleGlob() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	_ = os.WriteFile(filepath.Join(dir, "10-base.json"), []byte(`{"log": "info", "limit": 10}`), 0o644)
	_ = os.WriteFile(filepath.Join(dir, "50-debug.json"), []byte(`{"log": "debug"}`), 0o644)

	confd := file.Glob(filepath.Join(dir, "*.json"), jsonParser{}) // or json.Parser()
	m, _ := confd.Read()
	fmt.Println(m["log"], m["limit"])

	reloaded := make(chan map[string]any, 1)
	if err := confd.Watch(func(event any, err error) {
		if m, err := confd.Read(); err == nil { // in the callback: what it fired for
			select {
			case reloaded <- m:
			default:
			}
		}
	}); err != nil {
		log.Fatal(err)
	}
	defer confd.Unwatch()
	_ = os.Remove(filepath.Join(dir, "50-debug.json"))
	m = <-reloaded
	fmt.Println(m["log"], m["limit"])
	// Output:
	// debug 10
	// info 10
}
