package file

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/keepwatch/file/kubevol"
)

// Benchmarks of keepwatch alone that reach into the package: recovery from
// an injected failure, the changes only keepwatch sees, the cost of a
// re-check. Those against koanf's stock file provider, in the same run,
// are in tests/bench, a module of its own (this one requires no koanf
// module); `make bench` runs both and prints a table, and
// docs/benchmarks.md has the latest. Latencies are reported as percentiles
// over the b.N updates, so run them with a fixed count: go test -bench .
// -benchtime 200x.

// watcher is what the benchmarks need of a provider.
type watcher interface {
	ReadBytes() ([]byte, error)
	Watch(cb func(event any, err error)) error
	Unwatch() error
}

// probe is a watch callback that reloads, as an application would, and
// reports each reload's content and time.
type probe struct {
	b   *testing.B
	w   watcher
	got chan sample
}

type sample struct {
	data string
	at   time.Time
}

func newProbe(b *testing.B, newW func() watcher) *probe {
	p := &probe{b: b, got: make(chan sample, 64)}
	p.start(newW())
	b.Cleanup(func() { _ = p.w.Unwatch() })
	return p
}

func (p *probe) start(w watcher) {
	if _, err := w.ReadBytes(); err != nil {
		p.b.Fatal(err)
	}
	if err := w.Watch(func(_ any, err error) {
		if err != nil {
			return
		}
		data, _ := w.ReadBytes()
		select {
		case p.got <- sample{string(data), time.Now()}:
		default:
		}
	}); err != nil {
		p.b.Fatal(err)
	}
	p.w = w
}

// await returns when the probe reloads want, or false after limit.
func (p *probe) await(want string, limit time.Duration) (time.Time, bool) {
	timeout := time.After(limit)
	for {
		select {
		case s := <-p.got:
			if s.data == want {
				return s.at, true
			}
		case <-timeout:
			return time.Time{}, false
		}
	}
}

func (p *probe) drain() {
	for {
		select {
		case <-p.got:
		default:
			return
		}
	}
}

// latencies collects one latency per update and reports percentiles and
// the share of updates never delivered.
type latencies struct {
	d      []time.Duration
	missed int
}

func (l *latencies) report(b *testing.B) {
	b.StopTimer()
	n := len(l.d) + l.missed
	b.ReportMetric(100*float64(l.missed)/float64(max(n, 1)), "missed-%")
	if len(l.d) == 0 {
		return
	}
	slices.Sort(l.d)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(l.d[len(l.d)/2]), "p50-ms")
	b.ReportMetric(ms(l.d[min(len(l.d)-1, len(l.d)*99/100)]), "p99-ms")
}

// measure runs update b.N times, each followed by waiting for the reload of
// its content; latency runs from the time update returns (taken where the
// update becomes visible) to the reload.
func measure(b *testing.B, p *probe, update func(i int) (want string, since time.Time)) {
	var l latencies
	b.ResetTimer()
	for i := range b.N {
		p.drain()
		want, since := update(i)
		at, ok := p.await(want, 500*time.Millisecond)
		if !ok {
			l.missed++
			continue
		}
		l.d = append(l.d, at.Sub(since))
	}
	l.report(b)
}

func gen(i int) string {
	return fmt.Sprintf("generation: %d\nservice: {name: checkout, port: 8080}\n", i)
}

// From an injected watcher failure to the delivery of an update made while
// the watch was down: the first backoff step and a re-read. koanf's stock
// provider has no seam to inject through, and its watch ends for good on
// the first error, so it has no figure here.
func BenchmarkRecovery(b *testing.B) {
	b.Run("keepwatch", func(b *testing.B) {
		path := filepath.Join(b.TempDir(), "config.yaml")
		if err := os.WriteFile(path, []byte(gen(-1)), 0o644); err != nil {
			b.Fatal(err)
		}
		fs := &fakes{}
		// Every failure is a first failure: max = min keeps the backoff at
		// its first step, as after a healthy run.
		f := Provider(path, withNotifier(fs.new), withoutWriterProbe(), withBackoff(defaultBackoffMin, defaultBackoffMin),
			WithLogger(slog.New(slog.DiscardHandler)))
		p := newProbe(b, func() watcher { return f })
		measure(b, p, func(i int) (string, time.Time) {
			if err := os.WriteFile(path, []byte(gen(i)), 0o644); err != nil {
				b.Fatal(err)
			}
			start := time.Now()
			fs.last().fail(fsnotify.ErrEventOverflow)
			return gen(i), start
		})
	})
}

// Changes that only keepwatch sees, because it watches every directory on
// the way to the file and the file's own inode: a plain ancestor renamed
// away and another put in its place, two ancestors exchanged, and a write
// through a hard link in a directory nobody watches. The stock provider
// watches the file's directory only and sees none of them.
func BenchmarkReach(b *testing.B) {
	newProbeAt := func(b *testing.B, path string) *probe {
		return newProbe(b, func() watcher { return Provider(path, WithLogger(slog.New(slog.DiscardHandler))) })
	}
	app := func(b *testing.B, dir string, i int) {
		if err := os.MkdirAll(filepath.Join(dir, "conf"), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "conf", "config.yaml"), []byte(gen(i)), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("keepwatch/ancestor-rename", func(b *testing.B) {
		dir := filepath.Join(b.TempDir(), "app")
		app(b, dir, -1)
		p := newProbeAt(b, filepath.Join(dir, "conf", "config.yaml"))
		measure(b, p, func(i int) (string, time.Time) {
			app(b, dir+".new", i)
			if err := os.Rename(dir, dir+".old"); err != nil {
				b.Fatal(err)
			}
			start := time.Now()
			if err := os.Rename(dir+".new", dir); err != nil {
				b.Fatal(err)
			}
			if err := os.RemoveAll(dir + ".old"); err != nil {
				b.Fatal(err)
			}
			return gen(i), start
		})
	})
	b.Run("keepwatch/ancestor-exchange", func(b *testing.B) {
		dir := filepath.Join(b.TempDir(), "app")
		app(b, dir, -1)
		p := newProbeAt(b, filepath.Join(dir, "conf", "config.yaml"))
		measure(b, p, func(i int) (string, time.Time) {
			app(b, dir+".next", i)
			start := time.Now()
			if err := exchange(dir+".next", dir); errors.Is(err, errors.ErrUnsupported) {
				b.Skip("no atomic exchange on this OS")
			} else if err != nil {
				b.Fatal(err)
			}
			if err := os.RemoveAll(dir + ".next"); err != nil {
				b.Fatal(err)
			}
			return gen(i), start
		})
	})
	b.Run("keepwatch/hardlink-write", func(b *testing.B) {
		root := b.TempDir()
		path, link := filepath.Join(root, "conf.yaml"), filepath.Join(b.TempDir(), "link.yaml")
		if err := os.WriteFile(path, []byte(gen(-1)), 0o644); err != nil {
			b.Fatal(err)
		}
		if err := os.Link(path, link); err != nil {
			b.Fatal(err)
		}
		p := newProbeAt(b, path)
		measure(b, p, func(i int) (string, time.Time) {
			if err := os.WriteFile(link, []byte(gen(i)), 0o644); err != nil {
				b.Fatal(err)
			}
			return gen(i), time.Now()
		})
	})
}

// The cost of one idle re-check: the stat of the subject, as the re-check
// takes it, that finds nothing changed.
func BenchmarkRecheckCost(b *testing.B) {
	vol, err := kubevol.New(filepath.Join(b.TempDir(), "config"), map[string]string{"config.yaml": gen(0)})
	if err != nil {
		b.Fatal(err)
	}
	subj := &fileSubject{abs: vol.Path("config.yaml")}
	sig := subj.stat()
	b.ResetTimer()
	for range b.N {
		if subj.stat() != sig {
			b.Fatal("changed")
		}
	}
}
