package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
	keepwatch "github.com/keepwatch/file"
	"github.com/keepwatch/file/internal/yamlparser"
)

const watchAbout = `Watches each PATH with the keepwatch library and prints one line per update
it delivers (time, why it was read, size, short SHA-256; for a set, its
files and kubelet generation; for YAML or JSON, which top-level keys were
added (+), changed (~) or removed (-)), and one line per problem it
reports, once, until interrupted. A directory or a glob is watched as one
set (file.Glob), and so is -set DIR NAME... (file.Set): one line per change
of the whole set. With several PATHs, each is watched on its own, and each
line names the one it is about.

` + pathsHelp

func watchCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("watch", flag.ContinueOnError)
	fs.Usage = usageFunc(fs, "watch [flags] PATH...\n       keepwatch watch [flags] -set DIR NAME...", watchAbout)
	poll := fs.Duration("poll", 0, "poll at this interval instead of using inotify (for NFS or FUSE)")
	recheck := fs.Duration("recheck", 30*time.Second, "re-check interval, the safety net for missed events; 0 turns it off")
	quiet := fs.Duration("quiet", 100*time.Millisecond, "quiet window before reading a file written in place")
	verbose := fs.Bool("v", false, "log the library's records (debug level) to stderr")
	wait := fs.Bool("wait", false, "start on a PATH that does not resolve yet, and wait for it (file.WithWaitForPath); without it, a watch on such a PATH fails, as in a program")
	setDir := fs.String("set", "", "watch the arguments as the files of one file.Set in `DIR`, named relative to it")
	targets, err := parseTargets(fs, setDir, args, stderr)
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
	if *wait {
		opts = append(opts, keepwatch.WithWaitForPath())
	}

	out := &output{w: stdout}
	var all []*watched
	for _, t := range targets {
		w := &watched{t: t, out: out}
		if len(targets) > 1 {
			w.label = t.arg + " "
		}
		if err := w.start(ctx, opts); err != nil {
			return errors.Join(err, stopAll(all))
		}
		all = append(all, w)
	}
	<-ctx.Done()
	return stopAll(all)
}

// stopAll ends the watches (they end with ctx; this waits for a line a
// callback may be printing) and prints what each did.
func stopAll(all []*watched) error {
	wait, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var errs []error
	for _, w := range all {
		if err := w.p.Shutdown(wait); err != nil {
			errs = append(errs, err)
			continue
		}
		st := w.p.Stats()
		w.printf("stopped", "updates=%d restarts=%d problems=%d", st.Updates, st.Restarts, st.Errors)
	}
	return errors.Join(errs...)
}

// output is watch's standard output, shared by the watches: one line at a
// time.
type output struct {
	mu sync.Mutex
	w  io.Writer
}

// watched is one target being watched, and what it last showed.
type watched struct {
	t     target
	out   *output
	label string // the target's name and a space, when there are several
	p     provider
	file  *keepwatch.File    // for a file
	set   *keepwatch.FileSet // for a set

	// Guarded by the library: the first read happens before the watch
	// starts, and callbacks never overlap.
	keys  map[string]any // the last content's top-level keys; nil when it did not parse
	files []string       // a set's files last read
}

func (w *watched) printf(what, format string, args ...any) {
	w.out.mu.Lock()
	defer w.out.mu.Unlock()
	fmt.Fprintf(w.out.w, "%s  %-8s %s%s\n", time.Now().UTC().Format("2006-01-02T15:04:05.000Z"), what, w.label, fmt.Sprintf(format, args...))
}

// start reads the target, prints what it read, and starts its watch.
//
// A failed first read prints nothing: the watch reports the same problem
// itself when it starts (WithErrorCallbacks), because the application's
// read told the application, not the callback; printing both is what made
// a problem appear twice.
func (w *watched) start(ctx context.Context, opts []keepwatch.Option) error {
	if w.t.kind == single {
		w.file = keepwatch.Provider(w.t.path, opts...)
		w.p = w.file
		if data, err := w.file.ReadBytes(); err == nil {
			w.keys, _ = topLevel(w.t.path, data)
			w.printf("loaded", "size=%d sha256=%s%s", len(data), short(w.file.Stats().SHA256), keyCount(w.keys))
		}
	} else {
		w.set = w.t.set(yamlparser.Parser{}, opts...)
		w.p = w.set
		m, err := w.set.Read()
		if err == nil || parseFailure(err) {
			w.files = w.listed()
			st := w.set.Stats()
			var note string
			w.keys, note = setKeys(m, err)
			w.printf("loaded", "files=%s size=%d%s sha256=%s%s%s", strings.Join(w.files, ","), st.Size, generation(st), short(st.SHA256), keyCount(w.keys), note)
		}
	}
	if err := w.p.WatchWithContext(ctx, w.callback); err != nil {
		if errors.Is(err, keepwatch.ErrAlreadyWatching) {
			return err
		}
		return fmt.Errorf("%w (Watch fails on a path that does not resolve, as koanf's stock provider's does; -wait waits for it, as file.WithWaitForPath does)", err)
	}
	st := w.p.Stats()
	w.printf("watching", "mode=%s dirs=%s", st.Mode, strings.Join(st.WatchedDirs, ","))
	return nil
}

// listed is the set's files as read first: the library says which files
// each update has (SetEvent.Files), not which the first read had, so they
// are listed as the doctor lists them.
func (w *watched) listed() []string {
	dir, err := filepath.EvalSymlinks(w.t.path)
	if err != nil {
		return nil
	}
	base := dir
	if gen, err := os.Readlink(filepath.Join(dir, "..data")); err == nil && !filepath.IsAbs(gen) && !strings.ContainsRune(gen, filepath.Separator) {
		base = filepath.Join(dir, gen)
	}
	names, _ := w.t.members(base)
	return names
}

func (w *watched) callback(event any, err error) {
	if err != nil {
		w.printf("problem", "%v", err)
		return
	}
	switch ev := event.(type) {
	case fsnotify.Event:
		data, err := w.file.ReadBytes() // inside the callback: the content it fired for
		if err != nil {
			w.printf("problem", "%v", err)
			return
		}
		st := w.file.Stats()
		keys, err := topLevel(w.t.path, data)
		w.printf("update", "op=%s reason=%s size=%d sha256=%s%s", ev.Op, st.LastUpdateReason, len(data), short(st.SHA256), w.keysField(keys, err))
	case keepwatch.SetEvent:
		m, err := w.set.Read() // inside the callback: the content it fired for
		if err != nil && !parseFailure(err) {
			w.printf("problem", "%v", err)
			return
		}
		st := w.set.Stats()
		files := fmt.Sprintf("%d", len(ev.Files))
		if d := listDiff(w.files, ev.Files); d != "" {
			files += "(" + d + ")"
		}
		w.files = ev.Files
		keys, note := setKeys(m, err)
		field := note
		if note == "" {
			field = w.keysField(keys, nil)
		} else {
			w.keys = nil
		}
		w.printf("update", "op=%s reason=%s files=%s size=%d%s sha256=%s%s", ev.Op, st.LastUpdateReason, files, st.Size, generation(st), short(st.SHA256), field)
	}
}

// keysField says how the top-level keys changed from the last content, and
// remembers these.
func (w *watched) keysField(keys map[string]any, err error) string {
	diff := ""
	switch {
	case err != nil:
		diff = " keys=unparsable: " + err.Error()
	case keys != nil && w.keys != nil:
		diff = " keys=" + keyDiff(w.keys, keys)
	case keys != nil:
		diff = keyCount(keys)
	}
	w.keys = keys
	return diff
}

// parseFailure reports whether a set's read failed only in parsing a file:
// the files were read, and delivered.
func parseFailure(err error) bool {
	var pe *os.PathError
	return errors.As(err, &pe) && pe.Op == "parse"
}

// setKeys returns a set's merged top-level keys, or why there are none: a
// YAML or JSON file that does not parse says so; a set of other files
// (certificates, keys) has no keys to show.
func setKeys(m map[string]any, err error) (map[string]any, string) {
	var pe *os.PathError
	switch {
	case err == nil:
		return m, ""
	case errors.As(err, &pe) && structured(pe.Path):
		return nil, " keys=unparsable: " + err.Error()
	}
	return nil, ""
}

func structured(path string) bool {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

func generation(st keepwatch.Stats) string {
	if st.Generation == "" {
		return ""
	}
	return " generation=" + st.Generation
}

// listDiff lists the names added (+) and removed (-), or "".
func listDiff(old, cur []string) string {
	var out []string
	for _, n := range cur {
		if !slices.Contains(old, n) {
			out = append(out, "+"+n)
		}
	}
	for _, n := range old {
		if !slices.Contains(cur, n) {
			out = append(out, "-"+n)
		}
	}
	return strings.Join(out, ",")
}

func short(hash string) string { return hash[:min(12, len(hash))] }

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
		m, err := yamlparser.Parser{}.Unmarshal(data)
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
