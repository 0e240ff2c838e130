package koanf_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/keepwatch/file"
	"github.com/knadh/koanf/parsers/yaml"
	stock "github.com/knadh/koanf/providers/file"
	"github.com/knadh/koanf/v2"
	"github.com/stretchr/testify/require"
)

// siemens/wfx's TestReload, as it is: the config file is written in place
// and kept open (an *os.File the test holds until its end), and the test
// polls for 5 s for the new setting to take effect. The stock provider
// reads at every write event and passes in about 10 ms; keepwatch reads a
// writer that keeps the file open once it has gone a second without
// writing, so it passes too.
func TestAReloadTestThatKeepsTheFileOpenPasses(t *testing.T) {
	t.Parallel() // keepwatch's read comes a second after the write: it runs beside the others
	providers := []struct {
		name string
		new  func(t *testing.T, path string) koanfWatcher
	}{
		{"koanf's stock provider", func(t *testing.T, path string) koanfWatcher {
			return stock.Provider(path)
		}},
		{"keepwatch", func(t *testing.T, path string) koanfWatcher {
			f := file.Provider(path, file.WithLogger(testLogger(t)))
			t.Cleanup(func() { shutdown(t, f) })
			return f
		}},
	}
	for _, p := range providers {
		t.Run(p.name, func(t *testing.T) {
			// As wfx: a temporary file written through a handle kept open.
			cfgFile, err := os.Create(filepath.Join(t.TempDir(), "config.yaml"))
			require.NoError(t, err)
			defer cfgFile.Close()
			_, err = cfgFile.Write([]byte("log-level: trace"))
			require.NoError(t, err)

			k := koanf.New(".")
			fp := p.new(t, cfgFile.Name())
			require.NoError(t, k.Load(fp, yaml.Parser()))
			require.Equal(t, "trace", k.String("log-level"))
			require.NoError(t, fp.Watch(func(_ any, err error) {
				if err == nil {
					_ = k.Load(fp, yaml.Parser())
				}
			}))
			defer fp.Unwatch()

			// Modify the config file, in place, and keep it open.
			_, err = cfgFile.Seek(0, 0)
			require.NoError(t, err)
			_, err = cfgFile.Write([]byte("log-level: error"))
			require.NoError(t, err)
			start := time.Now()

			for range 500 {
				if k.String("log-level") == "error" {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			require.Equal(t, "error", k.String("log-level"),
				"not reloaded within wfx's 5 s while the writer keeps the file open")
			t.Logf("%s: reloaded %v after the write, the file still open", p.name, time.Since(start).Round(time.Millisecond))
		})
	}
}

// koanfWatcher is what wfx uses of a file provider.
type koanfWatcher interface {
	ReadBytes() ([]byte, error)
	Read() (map[string]any, error)
	Watch(cb func(event any, err error)) error
	Unwatch() error
}
