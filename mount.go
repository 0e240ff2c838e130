package file

import (
	"log/slog"
	"os"
	"path/filepath"

	"github.com/keepwatch/file/internal/chain"
	"github.com/keepwatch/file/internal/filemount"
	"github.com/keepwatch/file/internal/mountinfo"
	"github.com/keepwatch/file/internal/osfile"
)

// A single file mounted on its own (a Kubernetes subPath mount, docker's
// -v ./config.yaml:/etc/app/config.yaml) is of the file, not of its name
// on the host side: an edit in place of its source arrives, a replacement
// never does (internal/filemount says what the kernel shows of one). The
// watch says so once per provider when it first finds such a mount, and
// judges whether its source was replaced when each watch starts, at each
// re-check and poll, and when the file's attributes change (its link
// count drops to 0 as the host replaces its source, which its own watch
// hears at once); once replaced, at each read too, which is how a mount
// made again shows (its file is another: a re-check reads it).

// mountState is what the watch knows of the single file mounted at its
// path. Guarded by core.mu.
type mountState struct {
	point  string // where it is mounted; "" if no mount was found
	source string // the source's path on the host side, as the mount table first gave it
	state  filemount.State
}

// subPathMount returns the mount of a single file at one of paths or at
// what it resolves to, if there is one.
func subPathMount(mounts []mountinfo.Mount, paths []string) (mountinfo.Mount, bool) {
	var all []string
	for _, p := range paths {
		all = append(all, filepath.Clean(p))
		if c := chain.Resolve(p, nil); c.Real != "" && c.Real != p {
			all = append(all, c.Real)
		}
	}
	return mountinfo.FileMount(mounts, all...)
}

// mountFacts gathers what filemount judges, for the subject's paths, from
// the mount table at table, and returns the mount found, if any.
func mountFacts(table string, paths []string) (filemount.Facts, mountinfo.Mount, error) {
	mounts, err := mountinfo.ReadFile(table)
	if err != nil {
		return filemount.Facts{}, mountinfo.Mount{}, err
	}
	m, found := subPathMount(mounts, paths)
	f := filemount.Facts{Mounted: found, Root: m.Root}
	if !found {
		return f, m, nil
	}
	if info, err := os.Stat(m.Point); err == nil {
		f.Resolves, f.Links = true, osfile.LinkCount(info)
	}
	return f, m, nil
}

// checkMount looks for a single file mounted at the path when a watch
// starts. The first watch of a provider to find one says what it is, once
// per provider; each judges its source.
func (w *delivery) checkMount() {
	t := w.c.t
	if t.opts.mountInfo == "" {
		return
	}
	first := w.c.subPathChecked.CompareAndSwap(false, true)
	if !first && !w.c.fileMounted() {
		return
	}
	f, m, err := mountFacts(t.opts.mountInfo, t.subj.paths())
	if err != nil {
		return // not Linux, or no /proc: nothing to say
	}
	if first {
		if !f.Mounted {
			return
		}
		source := filemount.Source(m.Root)
		w.c.recordSubPath(m.Point, source)
		t.opts.log().Warn("keepwatch: single-file mount: edits in place arrive, a replacement does not; mount the directory instead",
			slog.String("path", t.path), slog.String("mount", m.Point), slog.String("source", source))
		w.report(w.c.errorf("watch", &mountError{kind: ErrSubPathMount, source: source}))
	}
	w.judgeMount(f, true)
}

// recheckMount judges again whether the source of the single file mounted
// at the path, if there is one, was replaced.
func (w *delivery) recheckMount() {
	t := w.c.t
	if t.opts.mountInfo == "" || !w.c.fileMounted() {
		return
	}
	f, _, err := mountFacts(t.opts.mountInfo, t.subj.paths())
	if err != nil {
		return
	}
	w.judgeMount(f, false)
}

// judgeMount takes what the mount's facts mean, and tells of a change:
// a replaced source as a problem, once per watch while it lasts, and its
// end. start says that the watch starts.
func (w *delivery) judgeMount(f filemount.Facts, start bool) {
	now := filemount.Judge(f)
	was, ok := w.c.recordMount(w, now)
	if !ok {
		return
	}
	log := w.c.t.opts.log()
	attrs := []any{slog.String("path", w.c.t.path), slog.String("mount", was.point), slog.String("source", was.source)}
	switch filemount.Next(was.state, now, start) {
	case filemount.Tell:
		log.Warn("keepwatch: mount source replaced, its changes no longer arrive; restart to read them, and mount the directory instead", attrs...)
		w.report(w.c.errorf("watch", &mountError{kind: ErrSourceReplaced, source: was.source}))
	case filemount.Over:
		log.Info("keepwatch: mount source back", attrs...)
	}
}

// attributes takes a change of attributes an event told of: a source
// replaced on the host side drops the link count of the file mounted.
func (w *delivery) attributes() { w.recheckMount() }

// recheckReplaced judges the mount again before a read is taken, while its
// source is replaced: a read after a re-check found another file there is
// how a mount made again shows.
func (w *delivery) recheckReplaced() {
	if w.c.sourceReplaced() {
		w.recheckMount()
	}
}

// recordSubPath records that the file is a single file mounted on its own,
// at point from source.
func (c *core) recordSubPath(point, source string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stats.subPath = true
	c.stats.mount.point, c.stats.mount.source = point, source
}

// fileMounted reports whether the watch found a single file mounted at the
// path.
func (c *core) fileMounted() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stats.subPath
}

// sourceReplaced reports whether the mount's source is replaced now.
func (c *core) sourceReplaced() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stats.mount.state == filemount.Replaced
}

// recordMount records the state the running watch judged the mount to
// be in, and returns what was recorded before; ok is false, and nothing is
// recorded, if the watch has stopped.
func (c *core) recordMount(w *delivery, now filemount.State) (was mountState, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if w.stopped() {
		return mountState{}, false
	}
	was = c.stats.mount
	c.stats.mount.state = now
	return was, true
}
