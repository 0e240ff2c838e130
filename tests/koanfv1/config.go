// Package config is a koanf v1 service's live config, as such services
// have it: koanf v1.5.0 with its maps, its JSON and YAML parsers and its
// stock file provider, in a module whose go.mod predates module graph
// pruning (go 1.16). The provider was swapped for keepwatch by the import
// line alone; `make test-majors` checks that go mod tidy takes the swap,
// and runs the tests.
package config

import (
	"path/filepath"
	"sync"

	file "github.com/keepwatch/file" // was: "github.com/knadh/koanf/providers/file"
	"github.com/knadh/koanf"
	"github.com/knadh/koanf/maps"
	"github.com/knadh/koanf/parsers/json"
	"github.com/knadh/koanf/parsers/yaml"
)

// Config is a YAML file's config, reloaded into a fresh koanf instance at
// each change, so that a key removed from the file goes.
type Config struct {
	f  *file.File
	mu sync.RWMutex
	k  *koanf.Koanf
}

// Load loads the YAML file at path.
func Load(path string) (*Config, error) {
	c := &Config{f: file.Provider(path)}
	k := koanf.New(".")
	if err := k.Load(c.f, yaml.Parser()); err != nil {
		return nil, err
	}
	c.k = k
	return c, nil
}

// Watch reloads the config at each change of the file and then calls
// changed. It fails if the file is not there, as the service's start
// relies on.
func (c *Config) Watch(changed func()) error {
	return c.f.Watch(func(event interface{}, err error) {
		if err != nil {
			return
		}
		k := koanf.New(".")
		if err := k.Load(c.f, yaml.Parser()); err != nil {
			return // keep the config in force
		}
		c.mu.Lock()
		c.k = k
		c.mu.Unlock()
		changed()
	})
}

// Stop stops the watch.
func (c *Config) Stop() error { return c.f.Unwatch() }

// String returns the value of key.
func (c *Config) String(key string) string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.k.String(key)
}

// Tree returns the config as nested maps.
func (c *Config) Tree() map[string]interface{} {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return maps.Unflatten(c.k.All(), ".")
}

// Overrides loads the JSON files of a conf.d directory as one config,
// merged in lexical order.
func Overrides(dir string) (*koanf.Koanf, error) {
	k := koanf.New(".")
	return k, k.Load(file.Glob(filepath.Join(dir, "*.json"), json.Parser()), nil)
}
