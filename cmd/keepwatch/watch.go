package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
	keepwatch "github.com/keepwatch/file"
	"github.com/knadh/koanf/parsers/yaml"
)

const watchAbout = `Watches PATH with the keepwatch library and prints one line per update it
delivers (time, why it was read, size, short SHA-256, and for YAML or JSON
files which top-level keys were added (+), changed (~) or removed (-)), and
one line per problem it reports, until interrupted.`

func watchCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("watch", flag.ContinueOnError)
	fs.Usage = usageFunc(fs, "watch [flags] PATH", watchAbout)
	poll := fs.Duration("poll", 0, "poll at this interval instead of using inotify (for NFS or FUSE)")
	recheck := fs.Duration("recheck", 30*time.Second, "re-check interval, the safety net for missed events; 0 turns it off")
	quiet := fs.Duration("quiet", 100*time.Millisecond, "quiet window before reading a file written in place")
	verbose := fs.Bool("v", false, "log the library's records (debug level) to stderr")
	path, err := parseFlags(fs, args, stderr)
	if err != nil {
		return err
	}

	logger := slog.New(slog.DiscardHandler)
	if *verbose {
		logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	// The user of this command reads the file anyway: the content's SHA-256
	// tells nothing they do not know.
	opts := []keepwatch.Option{keepwatch.WithLogger(logger), keepwatch.WithErrorCallbacks(), keepwatch.WithContentHash(),
		keepwatch.WithRecheckInterval(*recheck), keepwatch.WithQuietWindow(*quiet)}
	if *poll > 0 {
		opts = append(opts, keepwatch.WithPolling(*poll))
	}
	f := keepwatch.Provider(path, opts...)
	p := &printer{out: stdout, path: path}

	data, err := f.ReadBytes()
	p.loaded(data, f.Stats().SHA256, err)
	if err := f.WatchWithContext(ctx, func(event any, err error) {
		if err != nil {
			p.problem(err)
			return
		}
		data, err := f.ReadBytes() // inside the callback: the content it fired for
		if err != nil {
			p.problem(err)
			return
		}
		st := f.Stats()
		p.update(event.(fsnotify.Event), string(st.LastUpdateReason), st.SHA256, data)
	}); err != nil {
		return err
	}
	st := f.Stats()
	p.printf("watching", "mode=%s dirs=%s", st.Mode, strings.Join(st.WatchedDirs, ","))
	<-ctx.Done()
	// The watch ends with ctx; wait for a line the callback may be printing.
	wait, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := f.Shutdown(wait); err != nil {
		return err
	}
	p.printf("stopped", "updates=%d restarts=%d problems=%d", f.Stats().Updates, f.Stats().Restarts, f.Stats().Errors)
	return nil
}

// printer prints watch's lines, and remembers the top-level keys of the last
// content to say which changed.
type printer struct {
	mu   sync.Mutex
	out  io.Writer
	path string
	keys map[string]any // nil when the last content did not parse
}

func (p *printer) printf(what, format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.out, "%s  %-8s %s\n", time.Now().UTC().Format("2006-01-02T15:04:05.000Z"), what, fmt.Sprintf(format, args...))
}

// loaded prints the first read. Hashes are the library's (Stats.SHA256,
// with WithContentHash), shortened: of the content it last handed over.
func (p *printer) loaded(data []byte, hash string, err error) {
	if err != nil {
		p.problem(err)
		return
	}
	p.keys, _ = topLevel(p.path, data)
	p.printf("loaded", "size=%d sha256=%s%s", len(data), short(hash), keyCount(p.keys))
}

func (p *printer) update(ev fsnotify.Event, reason, hash string, data []byte) {
	keys, err := topLevel(p.path, data)
	diff := ""
	switch {
	case err != nil:
		diff = " keys=unparsable: " + err.Error()
	case keys != nil && p.keys != nil:
		diff = " keys=" + keyDiff(p.keys, keys)
	case keys != nil:
		diff = keyCount(keys)
	}
	p.keys = keys
	p.printf("update", "op=%s reason=%s size=%d sha256=%s%s", ev.Op, reason, len(data), short(hash), diff)
}

func short(hash string) string { return hash[:min(12, len(hash))] }

func (p *printer) problem(err error) {
	p.printf("problem", "%v", err)
}

func keyCount(keys map[string]any) string {
	if keys == nil {
		return ""
	}
	return fmt.Sprintf(" keys=%d", len(keys))
}

// topLevel parses a YAML or JSON file's top level; other files give nil.
func topLevel(path string, data []byte) (map[string]any, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".yaml", ".yml":
		m, err := yaml.Parser().Unmarshal(data)
		if err == nil && m == nil {
			m = map[string]any{}
		}
		return m, err
	case ".json":
		m := map[string]any{}
		if len(strings.TrimSpace(string(data))) == 0 {
			return m, nil
		}
		return m, json.Unmarshal(data, &m)
	}
	return nil, nil
}

// keyDiff lists the top-level keys added (+), changed (~) and removed (-),
// or "unchanged" (the file changed, its parsed content did not: comments,
// formatting, key order).
func keyDiff(old, cur map[string]any) string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(cur)) {
		prev, ok := old[k]
		switch {
		case !ok:
			out = append(out, "+"+k)
		case !reflect.DeepEqual(prev, cur[k]):
			out = append(out, "~"+k)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(old)) {
		if _, ok := cur[k]; !ok {
			out = append(out, "-"+k)
		}
	}
	if len(out) == 0 {
		return "unchanged"
	}
	return strings.Join(out, ",")
}
