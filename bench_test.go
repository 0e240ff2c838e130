package file

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/keepwatch/file/kubevol"
	"github.com/knadh/koanf/parsers/yaml"
	stock "github.com/knadh/koanf/providers/file"
	"github.com/knadh/koanf/v2"
)

// Benchmarks of keepwatch against koanf's stock file provider, in the same
// run. `make bench` runs them and prints a table; BENCHMARKS.md has the
// latest. Latencies are reported as percentiles over the b.N updates, so
// run them with a fixed count: go test -bench . -benchtime 200x.

// watcher is what the benchmarks need of either provider.
type watcher interface {
	ReadBytes() ([]byte, error)
	Watch(cb func(event any, err error)) error
	Unwatch() error
}

var providers = []struct {
	name string
	new  func(path string) watcher
}{
	{"keepwatch", func(path string) watcher { return Provider(path, WithLogger(slog.New(slog.DiscardHandler))) }},
	{"koanf", func(path string) watcher { return stockWatcher{stock.Provider(path)} }},
}

// stockWatcher marks koanf's provider, whose watch ends with the first
// error it reports.
type stockWatcher struct{ *stock.File }

// probe is a watch callback that reloads, as an application would, and
// reports each reload's content and time. When koanf's watch ends (with
// the first error it reports), the probe starts a new one, as a service
// that noticed would, and counts the restart.
type probe struct {
	b        *testing.B
	newW     func() watcher
	w        watcher
	got      chan sample
	died     atomic.Bool
	restarts int
}

type sample struct {
	data string
	at   time.Time
}

func newProbe(b *testing.B, newW func() watcher) *probe {
	p := &probe{b: b, newW: newW, got: make(chan sample, 64)}
	p.start()
	b.Cleanup(func() { _ = p.w.Unwatch() })
	return p
}

func (p *probe) start() {
	w := p.newW()
	if _, err := w.ReadBytes(); err != nil {
		p.b.Fatal(err)
	}
	_, endsOnError := w.(stockWatcher)
	p.died.Store(false)
	if err := w.Watch(func(_ any, err error) {
		if err != nil {
			if endsOnError {
				p.died.Store(true)
			}
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

// restartIfDead replaces a watch that has ended.
func (p *probe) restartIfDead() {
	if p.died.Load() {
		_ = p.w.Unwatch()
		p.restarts++
		p.start()
	}
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
		p.restartIfDead()
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
	if p.restarts > 0 {
		b.ReportMetric(float64(p.restarts), "restarts")
	}
}

func gen(i int) string {
	return fmt.Sprintf("generation: %d\nservice: {name: checkout, port: 8080}\n", i)
}

// A kubelet ConfigMap update: new payload directory, ..data renamed over.
func BenchmarkSwapLatency(b *testing.B) {
	for _, prov := range providers {
		b.Run(prov.name, func(b *testing.B) {
			vol, err := kubevol.New(filepath.Join(b.TempDir(), "config"), map[string]string{"config.yaml": gen(-1)})
			if err != nil {
				b.Fatal(err)
			}
			p := newProbe(b, func() watcher { return prov.new(vol.Path("config.yaml")) })
			var swapped time.Time
			vol.BeforeSwap = func() { swapped = time.Now() }
			measure(b, p, func(i int) (string, time.Time) {
				if _, err := vol.Update(map[string]string{"config.yaml": gen(i)}); err != nil {
					b.Fatal(err)
				}
				return gen(i), swapped
			})
		})
	}
}

// An editor's save: write a temporary file, rename it over the config.
func BenchmarkRenameLatency(b *testing.B) {
	for _, prov := range providers {
		b.Run(prov.name, func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "config.yaml")
			if err := os.WriteFile(path, []byte(gen(-1)), 0o644); err != nil {
				b.Fatal(err)
			}
			p := newProbe(b, func() watcher { return prov.new(path) })
			tmp := path + ".tmp"
			measure(b, p, func(i int) (string, time.Time) {
				if err := os.WriteFile(tmp, []byte(gen(i)), 0o644); err != nil {
					b.Fatal(err)
				}
				start := time.Now()
				if err := os.Rename(tmp, path); err != nil {
					b.Fatal(err)
				}
				return gen(i), start
			})
		})
	}
}

// An in-place write (truncate, then write), measured from its end: this is
// where keepwatch's quiet window costs.
func BenchmarkInPlaceLatency(b *testing.B) {
	for _, prov := range providers {
		b.Run(prov.name, func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "config.yaml")
			if err := os.WriteFile(path, []byte(gen(-1)), 0o644); err != nil {
				b.Fatal(err)
			}
			p := newProbe(b, func() watcher { return prov.new(path) })
			measure(b, p, func(i int) (string, time.Time) {
				if err := os.WriteFile(path, []byte(gen(i)), 0o644); err != nil {
					b.Fatal(err)
				}
				return gen(i), time.Now()
			})
		})
	}
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
		f := Provider(path, withNotifier(fs.new), withBackoff(defaultBackoffMin, defaultBackoffMin),
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
		return newProbe(b, func() watcher { return providers[0].new(path) })
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

var fileCounts = []int{1, 100, 10000}

// footprintCounts leaves out 1 file: one provider's heap is below the
// noise of a garbage collection.
var footprintCounts = []int{100, 10000}

// watchMany creates n files and watches each with its own provider, and
// reports whether the provider can do that many.
func watchMany(b *testing.B, newW func(string) watcher, n int) bool {
	root := b.TempDir()
	for i := range n {
		dir := filepath.Join(root, fmt.Sprintf("d%03d", i/100))
		if i%100 == 0 {
			if err := os.Mkdir(dir, 0o755); err != nil {
				b.Fatal(err)
			}
		}
		path := filepath.Join(dir, fmt.Sprintf("f%03d.yaml", i%100))
		if err := os.WriteFile(path, []byte(gen(0)), 0o644); err != nil {
			b.Fatal(err)
		}
		w := newW(path)
		if _, err := w.ReadBytes(); err != nil {
			b.Fatal(err)
		}
		if err := w.Watch(func(any, error) {}); err != nil {
			b.Logf("watch %d: %v", i+1, err)
			return false
		}
		b.Cleanup(func() { _ = w.Unwatch() })
	}
	return true
}

// CPU and allocations while nothing changes, per second. The window is one
// long sleep (on some virtual machines each timer wake-up costs tens of
// microseconds, which would swamp the figure) covering one round of the
// periodic re-check at its default interval, which is part of the cost.
func BenchmarkIdle(b *testing.B) {
	for _, prov := range providers {
		for _, n := range fileCounts {
			if prov.name == "koanf" && n > 100 {
				continue // it fails at 128: one inotify instance each
			}
			b.Run(fmt.Sprintf("%s/files=%d", prov.name, n), func(b *testing.B) {
				// The testing package calls a benchmark more than once; a
				// 31 s window is worth measuring only once.
				m, ok := idleResults[b.Name()]
				if !ok {
					m = measureIdle(b, prov.new, n)
					idleResults[b.Name()] = m
				}
				for range b.N {
				}
				b.ReportMetric(m.cpu, "cpu-µs/s")
				b.ReportMetric(m.allocs, "allocs/s")
			})
		}
	}
	// What is left at 10,000 files is the re-check's own cost: a stat per
	// file per round. Without it, idle is idle.
	b.Run("keepwatch/files=10000,recheck=off", func(b *testing.B) {
		m, ok := idleResults[b.Name()]
		if !ok {
			m = measureIdle(b, func(path string) watcher {
				return Provider(path, WithLogger(slog.New(slog.DiscardHandler)), WithRecheckInterval(0))
			}, 10000)
			idleResults[b.Name()] = m
		}
		for range b.N {
		}
		b.ReportMetric(m.cpu, "cpu-µs/s")
		b.ReportMetric(m.allocs, "allocs/s")
	})
}

type idle struct{ cpu, allocs float64 }

var idleResults = map[string]idle{}

func measureIdle(b *testing.B, newW func(string) watcher, n int) idle {
	if !watchMany(b, newW, n) {
		b.Skip("cannot watch that many")
	}
	time.Sleep(500 * time.Millisecond) // let the watches settle
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	cpu0, start := cpuTime(), time.Now()
	time.Sleep(defaultRecheckInterval + time.Second)
	wall := time.Since(start).Seconds()
	cpu := cpuTime() - cpu0
	runtime.ReadMemStats(&after)
	return idle{
		cpu:    float64(cpu) / float64(time.Microsecond) / wall,
		allocs: float64(after.Mallocs-before.Mallocs) / wall,
	}
}

// Heap, goroutines and inotify instances per watched file.
func BenchmarkFootprint(b *testing.B) {
	for _, prov := range providers {
		for _, n := range footprintCounts {
			if prov.name == "koanf" && n > 100 {
				continue
			}
			b.Run(fmt.Sprintf("%s/files=%d", prov.name, n), func(b *testing.B) {
				inotify0, goroutines0, watches0 := countInotifyFDs(), runtime.NumGoroutine(), countKernelWatches()
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				if !watchMany(b, prov.new, n) {
					b.Skip("cannot watch that many")
				}
				time.Sleep(100 * time.Millisecond)
				runtime.GC()
				runtime.ReadMemStats(&after)
				per := func(v float64) float64 { return v / float64(n) }
				b.ReportMetric(per(float64(after.HeapAlloc)-float64(before.HeapAlloc)), "heap-B/file")
				b.ReportMetric(per(float64(runtime.NumGoroutine()-goroutines0)), "goroutines/file")
				b.ReportMetric(per(float64(countInotifyFDs()-inotify0)), "inotify/file")
				b.ReportMetric(per(float64(countKernelWatches()-watches0)), "watches/file")
				for range b.N {
				}
			})
		}
	}
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

// A conf.d set of 100 files: one read of the whole set (read, parse and
// merge), and, in a kubelet volume of 100 keys, an update of one key to the
// callback's reload of the set.
func BenchmarkSet(b *testing.B) {
	dir := b.TempDir()
	for i := range 100 {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%03d.yaml", i)), []byte(fmt.Sprintf("key%d: {value: %d}\n", i, i)), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	set := Glob(filepath.Join(dir, "*.yaml"), yaml.Parser(), WithLogger(slog.New(slog.DiscardHandler)))
	b.Run("keepwatch/read,files=100", func(b *testing.B) {
		for b.Loop() {
			k := koanf.New(".")
			if err := k.Load(set, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("keepwatch/kubelet-update,files=100", func(b *testing.B) {
		payload := func(gen int) map[string]string {
			p := make(map[string]string)
			for i := range 100 {
				p[fmt.Sprintf("key%03d.yaml", i)] = fmt.Sprintf("key%d: {value: %d}\n", i, i)
			}
			p["key000.yaml"] = gen0(gen)
			return p
		}
		vol, err := kubevol.New(filepath.Join(b.TempDir(), "config"), payload(-1))
		if err != nil {
			b.Fatal(err)
		}
		names := make([]string, 100)
		for i := range names {
			names[i] = fmt.Sprintf("key%03d.yaml", i)
		}
		s := Set(vol.Dir, names, yaml.Parser(), WithLogger(slog.New(slog.DiscardHandler)))
		got := make(chan string, 64)
		if _, err := s.Read(); err != nil {
			b.Fatal(err)
		}
		if err := s.Watch(func(any, error) {
			m, err := s.Read()
			if err == nil {
				got <- fmt.Sprint(m["gen"])
			}
		}); err != nil {
			b.Fatal(err)
		}
		defer s.Unwatch()
		var swapped time.Time
		vol.BeforeSwap = func() { swapped = time.Now() }
		var l latencies
		for i := 0; b.Loop(); i++ {
			if _, err := vol.Update(payload(i)); err != nil {
				b.Fatal(err)
			}
			timeout := time.After(time.Second)
		wait:
			for {
				select {
				case g := <-got:
					if g == fmt.Sprint(i) {
						l.d = append(l.d, time.Since(swapped))
						break wait
					}
				case <-timeout:
					l.missed++
					break wait
				}
			}
		}
		l.report(b)
	})
}

func gen0(i int) string { return fmt.Sprintf("gen: %d\nkey0: {value: 0}\n", i) }
