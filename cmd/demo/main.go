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
	errs  []error // every error the callback was given, in order
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
			t.errs = append(t.errs, err)
			return
		}
		k := koanf.New(".")
		if err := k.Load(t.p, yaml.Parser()); err != nil {
			t.errs = append(t.errs, err)
			return
		}
		t.loads = append(t.loads, load{gen: k.String("generation"), at: time.Now()})
	})
}

// since returns the loads and the errors after the first n and m.
func (t *tracker) since(n, m int) ([]load, []error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.loads[n:]), slices.Clone(t.errs[m:])
}

// counts returns how many loads and errors there have been.
func (t *tracker) counts() (int, int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.loads), len(t.errs)
}

// step is one update of the volume, and what a newcomer needs to know to
// read its row.
type step struct {
	name string
	// kubelet: Linux kubelet makes this update (what says how often).
	kubelet bool
	// what the update is, and who makes it.
	what string
	// blind: why the stock provider, still watching, sees nothing of it;
	// "" if it does see it.
	blind string
	// dies: what may end the stock provider's watch during this update.
	dies string
	// gens: how many generations the update writes (the last is the one
	// to deliver); 0 means 1.
	gens int
	do   func(gen int) error
}

// kubeletRace is how a kubelet update can end the stock provider's watch.
const kubeletRace = "it resolves the symlinks again at each event and ends its watch at the first " +
	"failure; here the update removed the old payload while a resolution still went through it"

// volume is the demo's ConfigMap volume; an update may make it anew.
type volume struct {
	dir, path string
	v         *kubevol.Volume
}

// payload is the volume's content at generation gen.
func payload(gen int) map[string]string {
	return map[string]string{key: strings.Replace(defaultConfig, "generation: 0", fmt.Sprintf("generation: %d", gen), 1)}
}

func (v *volume) update(gen int) error {
	_, err := v.v.Update(payload(gen))
	return err
}

// steps are the updates the demo makes, in order.
func (v *volume) steps() []step {
	return []step{
		{
			name: "kubelet update (..data renamed over)", kubelet: true, do: v.update, dies: kubeletRace,
			what: "What kubelet does on every change of a ConfigMap or Secret: it writes the new payload " +
				"into a new ..<timestamp> directory, renames a ..data_tmp symlink to it over ..data, " +
				"and removes the old payload.",
		},
		{
			name: "edit of the file behind the symlinks", do: func(g int) error { return writeInPlace(v.path, payload(g)[key]) },
			what: "Someone on the node rewrites ..<timestamp>/config.yaml in place, in two pieces 20 ms " +
				"apart. Not kubelet, which never edits a payload; a pod's mount is read-only. keepwatch " +
				"reads it when the writer closes it.",
			blind: "it watches the volume directory only: the write is in the payload directory below it, " +
				"so no event names a name it watches, and it sees nothing",
		},
		{name: "kubelet update", kubelet: true, do: v.update, dies: kubeletRace, what: "As 1."},
		{
			name: "5 kubelet updates back to back", kubelet: true, dies: kubeletRace, gens: 5,
			do: func(g int) error {
				for i := g - 4; i <= g; i++ {
					if err := v.update(i); err != nil {
						return err
					}
				}
				return nil
			},
			what: "Five of kubelet's updates within milliseconds: a stress test, since kubelet updates " +
				"a volume at most once per sync (about a minute). The latency is to the last one; " +
				"\"+N on the way\": N of the four before it were delivered too, each whole (one that a " +
				"newer one replaced before it was read is skipped).",
		},
		{
			name: "..data removed, then created", do: func(g int) error { return v.v.SwapRemoveCreate(payload(g), 10*time.Millisecond) },
			what: "The payload switched by removing ..data and creating it again 10 ms later. Not what " +
				"kubelet does on Linux (it renames over ..data); kubelet on Windows does, and a sync " +
				"tool or an operator might.",
			dies: "it resolves the symlinks again at each event and ends its watch at the first failure; " +
				"here ..data was missing for 10 ms",
		},
		{name: "kubelet update", kubelet: true, do: v.update, dies: kubeletRace, what: "As 1."},
		{
			name: "key removed, then written as a plain file", do: func(g int) error {
				if err := os.Remove(v.path); err != nil {
					return err
				}
				time.Sleep(10 * time.Millisecond)
				return os.WriteFile(v.path, []byte(payload(g)[key]), 0o644)
			},
			what: "The config.yaml symlink replaced by a regular file, 10 ms later. Not kubelet; " +
				"a person or a tool (a hand-made layout, an init container) might.",
			dies: "it ends its watch when the file it watches is removed",
		},
		{
			name: "in-place edit (truncate, then write)", do: func(g int) error { return writeInPlace(v.path, payload(g)[key]) },
			what: "The plain file of 7 truncated and written in two pieces 20 ms apart, as an editor, " +
				"a shell redirect or a slow writer does. Not kubelet. keepwatch reads it when the " +
				"writer closes it, never half-written.",
			dies: "its watch ends at its first error",
		},
		{
			name: "volume directory removed and recreated", do: func(g int) error {
				if err := os.RemoveAll(v.dir); err != nil {
					return err
				}
				time.Sleep(10 * time.Millisecond)
				var err error
				v.v, err = kubevol.New(v.dir, payload(g))
				return err
			},
			what: "The whole directory deleted, and made again as kubelet makes a new volume, 10 ms " +
				"later. Not kubelet in a running pod; a tool that provisions the directory might.",
			dies: "it ends its watch when the file it watches is removed, or a resolution fails",
		},
	}
}

func run(out io.Writer) error {
	root, err := os.MkdirTemp("", "keepwatch-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(root)
	vol := &volume{dir: filepath.Join(root, "config")}
	if vol.v, err = kubevol.New(vol.dir, payload(0)); err != nil {
		return err
	}
	vol.path = vol.v.Path(key)

	quiet := slog.New(slog.DiscardHandler)
	kw := &tracker{p: keepwatch.Provider(vol.path, keepwatch.WithLogger(quiet))}
	st := &tracker{p: stock.Provider(vol.path), endsOnError: true}
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

	fmt.Fprintln(out, "keepwatch demo: keepwatch and koanf's stock file provider (providers/file v1.2.1) watch")
	fmt.Fprintln(out, "<volume>/config.yaml in a ConfigMap volume made the way kubelet makes one, where <volume> is")
	fmt.Fprintf(out, "%s. Each update bumps `generation`; \"yes\" means the application's\n", vol.dir)
	fmt.Fprintln(out, "callback loaded that generation, and the latency runs from the start of the update to that")
	fmt.Fprintln(out, "reload. \"kubelet?\" says whether Linux kubelet makes such an update; the notes under the")
	fmt.Fprintln(out, "table say what each update is.")
	fmt.Fprintln(out)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tupdate\tkubelet?\tkeepwatch\tkoanf stock provider")
	fmt.Fprintln(tw, "\t\t\treloaded?  latency\treloaded?  latency")
	steps := vol.steps()
	var (
		gen, kwOK, stOK int
		fate            stockFate
		notes           []string
	)
	for i, s := range steps {
		row := i + 1
		gen += max(1, s.gens)
		nkw, ekw := kw.counts()
		nst, est := st.counts()
		start := time.Now()
		if err := s.do(gen); err != nil {
			return fmt.Errorf("step %d: %w", row, err)
		}
		kwRes := await(kw, nkw, ekw, fmt.Sprint(gen), start, 5*time.Second)
		stRes := await(st, nst, est, fmt.Sprint(gen), start, time.Second)
		// Let the events of the update play out, so that what they do to
		// a provider shows in this row, not the next.
		time.Sleep(50 * time.Millisecond)
		if _, errs := st.since(nst, est); len(errs) > 0 && fate.diedAt == 0 {
			fate.diedAt, fate.lastErr = row, strings.ReplaceAll(errs[0].Error(), vol.dir, "<volume>")
		}
		if kwRes.ok {
			kwOK++
		}
		if stRes.ok {
			stOK++
		}
		stText, why := fate.explain(s, row, stRes)
		kubelet := "no"
		if s.kubelet {
			kubelet = "yes"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\n", row, s.name, kubelet, kwRes, stText)
		notes = append(notes, s.what+why)
	}
	tw.Flush()
	fmt.Fprintln(out, "\nWhat each update is:")
	for i, n := range notes {
		fmt.Fprint(out, wrap(fmt.Sprintf("%d. ", i+1), n, 96))
	}
	fmt.Fprintf(out, "\nkeepwatch delivered %d of %d updates; koanf's stock provider delivered %d of %d", kwOK, len(steps), stOK, len(steps))
	if fate.diedAt > 0 {
		fmt.Fprintf(out, ",\nand stopped watching for good at update %d: its watch ends at its first error, and nothing\nre-arms it unless the application calls Watch again.\n", fate.diedAt)
	} else {
		fmt.Fprintln(out, ".")
	}
	if kwOK < len(steps) {
		// keepwatch promises every final content: a miss is a bug, which
		// CI (make demo) is to catch.
		return fmt.Errorf("keepwatch missed %d of %d updates", len(steps)-kwOK, len(steps))
	}
	return nil
}

// stockFate is what became of the stock provider's watch.
type stockFate struct {
	diedAt  int    // the update its watch ended at; 0 while it watches
	lastErr string // its callback's error then, the volume's path shortened
}

// explain returns the stock provider's cell for a row, and what the row's
// note says of it.
func (f stockFate) explain(s step, row int, r result) (cell, note string) {
	cell = r.String()
	switch {
	case r.ok && f.diedAt == row:
		return cell + "  then its watch ended",
			fmt.Sprintf(" Stock: %s. Its watch ended just after the reload; its callback's last error: %q.", s.dies, f.lastErr)
	case r.ok:
		return cell, ""
	case f.diedAt == row:
		return "NO   its watch ended", fmt.Sprintf(" Stock: %s. Its callback's last error: %q.", s.dies, f.lastErr)
	case f.diedAt > 0:
		return fmt.Sprintf("NO   its watch ended at %d", f.diedAt), ""
	case s.blind != "":
		return "NO   saw nothing", " Stock: " + s.blind + "."
	}
	return "NO   nothing within 1 s", ""
}

// wrap renders text after prefix, in lines of at most width characters,
// indented under the first.
func wrap(prefix, text string, width int) string {
	var b strings.Builder
	indent := strings.Repeat(" ", len(prefix))
	line := prefix
	for _, w := range strings.Fields(text) {
		if len(line)+1+len(w) > width && strings.TrimSpace(line) != strings.TrimSpace(prefix) {
			b.WriteString(strings.TrimRight(line, " ") + "\n")
			line = indent
		}
		if line != prefix && line != indent {
			line += " "
		}
		line += w
	}
	b.WriteString(line + "\n")
	return b.String()
}

// result is how one provider fared on one update.
type result struct {
	ok      bool
	latency time.Duration
	extra   []string // other generations it loaded on the way; "" is an empty config
}

func (r result) String() string {
	s := "NO"
	if r.ok {
		s = fmt.Sprintf("yes  %5.1f ms", float64(r.latency)/float64(time.Millisecond))
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
// went: the latency is from the start of the update to the reload. A
// provider whose watch ends at its first error is not waited for after it.
func await(t *tracker, n, m int, want string, start time.Time, limit time.Duration) result {
	deadline := time.Now().Add(limit)
	for {
		loads, errs := t.since(n, m)
		var r result
		for _, l := range loads {
			if l.gen == want {
				r.ok, r.latency = true, l.at.Sub(start)
			} else {
				r.extra = append(r.extra, l.gen)
			}
		}
		if r.ok || time.Now().After(deadline) || t.endsOnError && len(errs) > 0 {
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

// errNoAdmin is the authorization service's own rule, which its Validate
// enforces.
var errNoAdmin = errors.New("an admin must remain")

// revokedRole puts three ways of reloading an authorization policy through
// two pushes to its ConfigMap: a role revoked, and a policy that breaks the
// service's rule. koanf's README reloads into the instance it has, which
// merges: the revoked role stays granted, with either provider. keepwatch's
// live.Config builds a fresh instance on each change, and keeps the last
// good one when its Validate rejects a push.
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
		Name:  "authz",
		Load:  func(k *koanf.Koanf) error { return k.Load(policy, yaml.Parser()) },
		Watch: []live.Watcher{policy},
		Validate: func(k *koanf.Koanf) error {
			for _, user := range k.MapKeys("roles") {
				if slices.Contains(k.Strings("roles."+user), "admin") {
					return nil
				}
			}
			return errNoAdmin
		},
		Logger: quiet,
	}
	if err := cfg.Start(); err != nil {
		return err
	}
	defer cfg.Close()
	published := make(chan struct{}, 8)
	defer cfg.Subscribe(func(_, _ *koanf.Koanf) { published <- struct{}{} })()

	fmt.Fprintln(out, "Reloading an authorization policy (a ConfigMap, updated by kubelet) three ways: as koanf's")
	fmt.Fprintln(out, "README shows, k.Load(provider, parser) into the instance the application has, with either")
	fmt.Fprintln(out, "provider; and with keepwatch's live.Config, whose Validate enforces the rule \""+errNoAdmin.Error()+"\".")
	fmt.Fprintln(out)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tpush\tkoanf README reload,\tkoanf README reload,\tkeepwatch live.Config")
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
	var rejection error
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
		var liveSays, why string
		if push.liveRejects { // nothing is published: wait for the rejection
			st, err := awaitRejection(cfg, before, 10*time.Second)
			if err != nil {
				return err
			}
			rejection = st.LastError
			liveSays = push.show(cfg.Koanf()) + ", push rejected:"
			why = fmt.Sprintf("Validate says %q", errors.Unwrap(rejection))
		} else {
			select {
			case <-published:
			case <-time.After(10 * time.Second):
				return fmt.Errorf("push %d: live.Config published nothing", i+1)
			}
			liveSays = push.show(cfg.Koanf())
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\n", i+1, push.name, stockApp.show(push.show), kwApp.show(push.show), liveSays)
		if why != "" {
			fmt.Fprintf(tw, "\t\t\t\t%s\n", why)
		}
	}
	tw.Flush()
	fmt.Fprintln(out, "\nkoanf's Load merges into the instance it has, so a revoked role stays granted with either")
	fmt.Fprintln(out, "provider; live.Config builds a fresh instance per change and publishes only what validates.")
	if rejection != nil {
		fmt.Fprintln(out, "Push 2 broke the service's rule, so the last good policy stays in force; the rejection is")
		fmt.Fprintf(out, "logged, told to OnError and kept in Stats().LastError:\n  %v\n", rejection)
	}
	return nil
}

// awaitRejection waits up to limit for cfg to reject a reload after the
// first before, and returns its stats then. The rejection must be
// Validate's, by the service's rule.
func awaitRejection(cfg *live.Config, before uint64, limit time.Duration) (live.Stats, error) {
	deadline := time.Now().Add(limit)
	for {
		st := cfg.Stats()
		if st.Rejected > before {
			if !errors.Is(st.LastError, live.ErrRejected) || !errors.Is(st.LastError, errNoAdmin) {
				return st, fmt.Errorf("live.Config failed otherwise than by its rule: %w", st.LastError)
			}
			return st, nil
		}
		if time.Now().After(deadline) {
			return st, errors.New("live.Config did not reject the policy without an admin")
		}
		time.Sleep(time.Millisecond)
	}
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
