// Command demo puts keepwatch and koanf's stock file provider through the
// same series of updates to a Kubernetes-style ConfigMap volume, and prints
// which updates each of them delivered.
//
// It needs nothing but Go: the volume is built in a temporary directory the
// way kubelet builds it, and the config is embedded.
package main

import (
	_ "embed"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	keepwatch "github.com/keepwatch/file"
	"github.com/keepwatch/file/kubevol"
	"github.com/keepwatch/file/live"
	"github.com/knadh/koanf/parsers/yaml"
	stock "github.com/knadh/koanf/providers/file"
	"github.com/knadh/koanf/v2"
)

//go:embed config.yaml
var defaultConfig string

const key = "config.yaml"

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
	fmt.Println()
	if err := revokedRole(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

// provider is what the demo needs of either provider.
type provider interface {
	koanf.Provider
	Watch(cb func(event any, err error)) error
	Unwatch() error
}

// tracker reloads a koanf instance from a provider on each callback, as an
// application would, and remembers every generation it loaded.
type tracker struct {
	p provider
	// endsOnError: the provider's watch ends with the first error it reports.
	endsOnError bool

	mu sync.Mutex
	// loads[i] is the generation loaded by reload i ("" for an empty config)
	loads []load
	err   error // the last error the callback was given
}

type load struct {
	gen string
	at  time.Time
}

func (t *tracker) start() error {
	return t.p.Watch(func(_ any, err error) {
		t.mu.Lock()
		defer t.mu.Unlock()
		if err != nil {
			t.err = err
			return
		}
		k := koanf.New(".")
		if err := k.Load(t.p, yaml.Parser()); err != nil {
			t.err = err
			return
		}
		t.loads = append(t.loads, load{gen: k.String("generation"), at: time.Now()})
	})
}

// since returns the loads made after the first n, and the last error.
func (t *tracker) since(n int) ([]load, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]load(nil), t.loads[n:]...), t.err
}

func (t *tracker) count() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.loads)
}

type step struct {
	name string
	do   func(gen int) error
}

func run(out io.Writer) error {
	root, err := os.MkdirTemp("", "keepwatch-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(root)
	dir := filepath.Join(root, "config")
	payload := func(gen int) map[string]string {
		return map[string]string{key: strings.Replace(defaultConfig, "generation: 0", fmt.Sprintf("generation: %d", gen), 1)}
	}
	vol, err := kubevol.New(dir, payload(0))
	if err != nil {
		return err
	}
	path := vol.Path(key)

	quiet := slog.New(slog.DiscardHandler)
	kw := &tracker{p: keepwatch.Provider(path, keepwatch.WithLogger(quiet))}
	st := &tracker{p: stock.Provider(path), endsOnError: true}
	for _, t := range []*tracker{kw, st} {
		k := koanf.New(".")
		if err := k.Load(t.p, yaml.Parser()); err != nil {
			return err
		}
		if err := t.start(); err != nil {
			return err
		}
		defer t.p.Unwatch()
	}

	steps := []step{
		{"kubelet update (..data renamed over)", func(g int) error { _, err := vol.Update(payload(g)); return err }},
		{"edit of the file behind the symlinks", func(g int) error { return writeInPlace(path, payload(g)[key]) }},
		{"kubelet update", func(g int) error { _, err := vol.Update(payload(g)); return err }},
		{"5 kubelet updates back to back", func(g int) error {
			for i := g - 4; i <= g; i++ {
				if _, err := vol.Update(payload(i)); err != nil {
					return err
				}
			}
			return nil
		}},
		{"..data removed, then created", func(g int) error { return vol.SwapRemoveCreate(payload(g), 10*time.Millisecond) }},
		{"kubelet update", func(g int) error { _, err := vol.Update(payload(g)); return err }},
		{"key removed, then written as a plain file", func(g int) error {
			if err := os.Remove(path); err != nil {
				return err
			}
			time.Sleep(10 * time.Millisecond)
			return os.WriteFile(path, []byte(payload(g)[key]), 0o644)
		}},
		{"in-place edit (truncate, then write)", func(g int) error { return writeInPlace(path, payload(g)[key]) }},
		{"volume directory removed and recreated", func(g int) error {
			if err := os.RemoveAll(dir); err != nil {
				return err
			}
			time.Sleep(10 * time.Millisecond)
			vol, err = kubevol.New(dir, payload(g))
			return err
		}},
	}

	fmt.Fprintf(out, "keepwatch demo: a ConfigMap-style volume in %s, watched by two providers.\n", dir)
	fmt.Fprintf(out, "Each update bumps `generation`; \"reloaded\" means the application's callback loaded it,\n")
	fmt.Fprintf(out, "and the latency runs from the start of the update to that reload.\n\n")
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tupdate\tkeepwatch\tkoanf providers/file v1.2.1")
	fmt.Fprintln(tw, "\t\treloaded?  latency\treloaded?  latency")
	gen, kwOK, stOK, stDied := 0, 0, 0, 0
	for i, s := range steps {
		gen++
		if strings.HasPrefix(s.name, "5 ") {
			gen += 4
		}
		want := fmt.Sprint(gen)
		nkw, nst := kw.count(), st.count()
		start := time.Now()
		if err := s.do(gen); err != nil {
			return fmt.Errorf("step %d: %w", i+1, err)
		}
		kwRes := await(kw, nkw, want, start, 5*time.Second)
		stRes := await(st, nst, want, start, 300*time.Millisecond)
		if kwRes.ok {
			kwOK++
		}
		if stRes.ok {
			stOK++
		}
		if stRes.dead && stDied == 0 {
			stDied = i + 1
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", i+1, s.name, kwRes, stRes)
	}
	tw.Flush()
	fmt.Fprintf(out, "\nkeepwatch delivered %d of %d updates; koanf's stock provider delivered %d of %d", kwOK, len(steps), stOK, len(steps))
	if stDied > 0 {
		_, err := st.since(0)
		fmt.Fprintf(out, " and stopped watching for good at update %d\n(its callback's last error: %v).\n", stDied, err)
	} else {
		fmt.Fprintln(out, ".")
	}
	return nil
}

// result is how one provider fared on one update.
type result struct {
	ok      bool
	dead    bool
	latency time.Duration
	extra   []string // other generations it loaded on the way; "" is an empty config
}

func (r result) String() string {
	var s string
	switch {
	case r.ok:
		s = fmt.Sprintf("yes  %5.1f ms", float64(r.latency)/float64(time.Millisecond))
	case r.dead:
		s = "NO   (its watch has ended)"
	default:
		s = "NO"
	}
	switch {
	case slices.Contains(r.extra, ""):
		s += "  (loaded an EMPTY config first)"
	case len(r.extra) > 0:
		s += fmt.Sprintf("  (+%d on the way)", len(r.extra))
	}
	return s
}

// await waits up to limit for the tracker to load want, and reports how it
// went: the latency is from the start of the update to the reload.
func await(t *tracker, n int, want string, start time.Time, limit time.Duration) result {
	deadline := time.Now().Add(limit)
	for {
		loads, err := t.since(n)
		var r result
		for _, l := range loads {
			if l.gen == want {
				r.ok, r.latency = true, l.at.Sub(start)
			} else {
				r.extra = append(r.extra, l.gen)
			}
		}
		r.dead = t.endsOnError && err != nil && !r.ok
		if r.ok || time.Now().After(deadline) {
			return r
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// writeInPlace truncates the file and writes data in two pieces, as a slow
// or streaming writer does.
func writeInPlace(path, data string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return err
	}
	half := len(data) / 2
	if _, err := f.WriteString(data[:half]); err != nil {
		f.Close()
		return err
	}
	time.Sleep(20 * time.Millisecond)
	if _, err := f.WriteString(data[half:]); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// revokedRole puts three ways of reloading an authorization policy through
// two pushes to its ConfigMap: a role revoked, and a policy that fails the
// service's own check. koanf's README reloads into the instance it has,
// which merges: the revoked role stays granted, with either provider.
// keepwatch's Live builds a fresh instance on each change, and keeps the
// last good one when a push is rejected.
func revokedRole(out io.Writer) error {
	root, err := os.MkdirTemp("", "keepwatch-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(root)
	vol, err := kubevol.New(filepath.Join(root, "authz"), map[string]string{
		"policy.yaml": "roles:\n  alice: [read, write, admin]\n  bob: [read]\n"})
	if err != nil {
		return err
	}
	path := vol.Path("policy.yaml")
	quiet := slog.New(slog.DiscardHandler)

	readme := func(p provider) (*sameInstance, error) {
		s := &sameInstance{k: koanf.New("."), loaded: make(chan struct{}, 8)}
		if err := s.k.Load(p, yaml.Parser()); err != nil {
			return nil, err
		}
		return s, p.Watch(func(_ any, err error) {
			if err == nil {
				s.mu.Lock()
				_ = s.k.Load(p, yaml.Parser()) // koanf's README: into the instance it has
				s.mu.Unlock()
				s.loaded <- struct{}{}
			}
		})
	}
	stockP, kwP := stock.Provider(path), keepwatch.Provider(path, keepwatch.WithLogger(quiet))
	stockApp, err := readme(stockP)
	if err != nil {
		return err
	}
	defer stockP.Unwatch()
	kwApp, err := readme(kwP)
	if err != nil {
		return err
	}
	defer kwP.Unwatch()

	policy := keepwatch.Provider(path, keepwatch.WithLogger(quiet))
	cfg := &live.Config{
		Load:  func(k *koanf.Koanf) error { return k.Load(policy, yaml.Parser()) },
		Watch: []live.Watcher{policy},
		Validate: func(k *koanf.Koanf) error {
			for _, user := range k.MapKeys("roles") {
				if slices.Contains(k.Strings("roles."+user), "admin") {
					return nil
				}
			}
			return errors.New("no admin left")
		},
		Logger: quiet,
	}
	if err := cfg.Start(); err != nil {
		return err
	}
	defer cfg.Close()
	published := make(chan struct{}, 8)
	defer cfg.Subscribe(func(_, _ *koanf.Koanf) { published <- struct{}{} })()

	fmt.Fprintln(out, "Reloading an authorization policy (a ConfigMap, updated by kubelet):")
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tpush\tkoanf README reload,\tkoanf README reload,\tkeepwatch Live")
	fmt.Fprintln(tw, "\t\tstock provider\tkeepwatch provider\t")
	pushes := []struct {
		name, policy string
		show         func(k *koanf.Koanf) string
		liveRejects  bool
	}{
		{"bob's role revoked", "roles:\n  alice: [read, write, admin]\n", func(k *koanf.Koanf) string {
			if r := k.Strings("roles.bob"); len(r) > 0 {
				return fmt.Sprintf("bob still has %v", r)
			}
			return "bob has no role"
		}, false},
		{"alice demoted: no admin left", "roles:\n  alice: [read]\n", func(k *koanf.Koanf) string {
			return fmt.Sprintf("alice has %v", k.Strings("roles.alice"))
		}, true},
	}
	for i, push := range pushes {
		before := cfg.Stats().Rejected
		if _, err := vol.Update(map[string]string{"policy.yaml": push.policy}); err != nil {
			return err
		}
		for _, app := range []*sameInstance{stockApp, kwApp} {
			select {
			case <-app.loaded:
			case <-time.After(2 * time.Second):
			}
		}
		if push.liveRejects { // nothing is published: wait for the rejection
			for cfg.Stats().Rejected == before {
				time.Sleep(time.Millisecond)
			}
		} else {
			<-published
		}
		liveSays := push.show(cfg.Koanf())
		if push.liveRejects {
			liveSays += " (push rejected, last good kept)"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\n", i+1, push.name, stockApp.show(push.show), kwApp.show(push.show), liveSays)
	}
	tw.Flush()
	fmt.Fprintln(out, "\nkoanf's Load merges into the instance it has, so a revoked role stays granted with either")
	fmt.Fprintln(out, "provider; Live builds a fresh instance per change and publishes only what validates.")
	return nil
}

// sameInstance is an application reloading as koanf's README shows: into
// the instance it already has.
type sameInstance struct {
	mu     sync.Mutex
	k      *koanf.Koanf
	loaded chan struct{}
}

func (s *sameInstance) show(f func(*koanf.Koanf) string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return f(s.k)
}
