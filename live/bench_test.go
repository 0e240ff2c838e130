package live_test

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/keepwatch/file"
	"github.com/keepwatch/file/live"
	"github.com/knadh/koanf/parsers/yaml"
	stock "github.com/knadh/koanf/providers/file"
	"github.com/knadh/koanf/v2"
)

// Benchmarks of the live config: go test -run '^$' -bench . ./live/

// A reader's fetch of the live config and a Get from it, against koanf's
// own Get on an instance shared by every reader, as koanf's README has it;
// one reader at a time, and every core reading at once.
func BenchmarkLiveGet(b *testing.B) {
	path := filepath.Join(b.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(policyYAML(50)), 0o644); err != nil {
		b.Fatal(err)
	}
	f := file.Provider(path, file.WithLogger(slog.New(slog.DiscardHandler)))
	cfg := &live.Config{Load: loadYAML(f), Watch: []live.Watcher{f}, Logger: slog.New(slog.DiscardHandler)}
	if err := cfg.Start(); err != nil {
		b.Fatal(err)
	}
	defer cfg.Close()
	shared := koanf.New(".")
	if err := shared.Load(f, yaml.Parser()); err != nil {
		b.Fatal(err)
	}
	const key = "roles.user25"
	b.Run("keepwatch/fetch", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if cfg.Koanf() == nil {
				b.Fatal("no config")
			}
		}
	})
	b.Run("keepwatch/fetch+get", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if cfg.Koanf().Get(key) == nil {
				b.Fatal(key)
			}
		}
	})
	b.Run("koanf/get", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if shared.Get(key) == nil {
				b.Fatal(key)
			}
		}
	})
	b.Run("keepwatch/fetch+get,parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				_ = cfg.Koanf().Get(key)
			}
		})
	})
	b.Run("koanf/get,parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				_ = shared.Get(key)
			}
		})
	})
}

// policyYAML is an authorization policy with n users.
func policyYAML(n int) string {
	var sb strings.Builder
	sb.WriteString("roles:\n")
	for i := range n {
		fmt.Fprintf(&sb, "  user%d: [read, write]\n", i)
	}
	return sb.String()
}

// A reload of a 1 MiB policy: a fresh instance loaded, parsed and
// published. The policy is nested, groups of users, as real ones are:
// yaml.v3 checks each key of a map against every other, so one flat map
// of 40,000 keys costs it seconds whatever reads the file.
func BenchmarkLiveReload(b *testing.B) {
	path := filepath.Join(b.TempDir(), "policy.yaml")
	var sb strings.Builder
	sb.WriteString("groups:\n")
	for g := 0; sb.Len() < 1<<20; g++ {
		fmt.Fprintf(&sb, "  group%d:\n", g)
		for u := range 100 {
			fmt.Fprintf(&sb, "    user%d: [read, write, deploy]\n", u)
		}
	}
	data := sb.String()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		b.Fatal(err)
	}
	f := file.Provider(path, file.WithLogger(slog.New(slog.DiscardHandler)))
	cfg := &live.Config{Load: loadYAML(f), Logger: slog.New(slog.DiscardHandler)}
	if err := cfg.Start(); err != nil {
		b.Fatal(err)
	}
	defer cfg.Close()
	b.Run(fmt.Sprintf("keepwatch/policy=%dKiB", len(data)>>10), func(b *testing.B) {
		for b.Loop() {
			if err := cfg.Reload(); err != nil {
				b.Fatal(err)
			}
		}
	})
	// The same file loaded by koanf alone, into a fresh instance: what the
	// reload costs that is not the parse.
	b.Run(fmt.Sprintf("koanf/policy=%dKiB", len(data)>>10), func(b *testing.B) {
		for b.Loop() {
			if err := koanf.New(".").Load(stock.Provider(path), yaml.Parser()); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// The typed value's read, against a plain atomic.Pointer load of the same
// value in the same run: what Get adds is a nil check. One reader, and
// every core reading at once.
func BenchmarkValueGet(b *testing.B) {
	src := &source{data: policyYAML(50)}
	val := &live.Value[*roles]{Load: loadYAML(src), Watch: []live.Watcher{src}, Logger: slog.New(slog.DiscardHandler)}
	if err := val.Start(); err != nil {
		b.Fatal(err)
	}
	defer val.Close()
	var plain atomic.Pointer[roles]
	plain.Store(val.Get())
	var sink *roles
	b.Run("live.Value.Get", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			sink = val.Get()
		}
	})
	b.Run("atomic.Pointer.Load", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			sink = plain.Load()
		}
	})
	b.Run("live.Value.Get,parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if val.Get() == nil {
					b.Fatal("no value")
				}
			}
		})
	})
	b.Run("atomic.Pointer.Load,parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if plain.Load() == nil {
					b.Fatal("no value")
				}
			}
		})
	})
	if sink == nil {
		b.Fatal("no value")
	}
}
