package file

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
)

// watchSet is what a session's notifier watches, and the names it asked
// for events of: the one owner of both. A resolution of the path (a
// sight) says what it should be; the session adds what is missing after
// each read, and removes what the path no longer needs.
type watchSet struct {
	n       notifier
	caps    caps                   // what n can see
	watched map[string]bool        // paths n watches: directories, and the files themselves
	ids     map[string]int         // the id of each watched path's watch
	fileOf  map[string]fs.FileInfo // the file each watch of a file by itself was added for, where known
	wanted  map[string]bool        // paths whose events n was asked for
	anew    []string               // paths the last resolution wanted that were not wanted before it
	refused map[string]error       // paths a watch was refused on, and why; tried again at each look
	dirty   bool                   // watched changed since the sink was last told
}

func newWatchSet(n notifier) *watchSet {
	return &watchSet{n: n, caps: n.Caps(), watched: make(map[string]bool), ids: make(map[string]int), fileOf: make(map[string]fs.FileInfo), wanted: make(map[string]bool),
		refused: make(map[string]error)}
}

// want asks the notifier for the events that name path, unless it has
// already: the notifier takes the hub's lock for it, which its backend
// holds while it hands on events, and a kubelet update's own events would
// hold up every name of the path looked up again after it.
func (w *watchSet) want(path string) {
	if !w.wanted[path] {
		w.wanted[path] = true
		w.anew = append(w.anew, path)
		w.n.Want(path)
	}
}

// resolving begins a resolution: what it wants anew is counted from here.
func (w *watchSet) resolving() { w.anew = w.anew[:0] }

// unheard reports whether a file the resolution v led to was not wanted
// before it (a symlink retargeted to a file in a directory watched
// already): events on it went to no one until then, a writer's among them.
func (w *watchSet) unheard(v *sight) bool {
	return slices.ContainsFunc(v.files, func(f string) bool { return slices.Contains(w.anew, f) })
}

// plan lists what to watch for the resolution v: the directories it
// depends on (chain.Dirs), and where the notifier can afford them, every
// other directory the resolution went through (a plain ancestor renamed or
// exchanged moves the path) and the file itself (a write through another
// of its names, a hard link or the source of a bind mount, is reported
// only there).
func (w *watchSet) plan(v *sight) []string {
	paths := slices.Clone(v.dirs)
	if home := v.home; w.refused[home] != nil && !slices.Contains(paths, filepath.Dir(home)) {
		// The file's directory cannot be watched: the one above reports
		// it made enterable, replaced or removed.
		paths = append(paths, filepath.Dir(home))
	}
	if w.caps.ancestors {
		for _, d := range v.searched {
			if !slices.Contains(paths, d) {
				paths = append(paths, d)
			}
		}
	}
	if w.caps.files {
		for _, f := range v.files {
			if !slices.Contains(paths, f) {
				paths = append(paths, f)
			}
		}
	}
	return paths
}

// missing lists what the plan for v watches that is not watched yet (all
// of it if all).
func (w *watchSet) missing(v *sight, all bool) []string {
	var paths []string
	for _, p := range w.plan(v) {
		if all || !w.watched[p] {
			paths = append(paths, p)
		}
	}
	return paths
}

// add adds watches on paths, for the resolution v, and returns how many it
// added. A watch refused for want of permission (a directory the process
// may traverse but not list, mode 0711, or not enter, 0700) is done
// without, as long as another stands in for it (see blind). So is a watch
// beyond v's dirs that the kernel has no room for. Any other failure is
// returned: it ends the session, unless the path vanished, which the
// caller handles by resolving again.
func (w *watchSet) add(v *sight, paths []string, trace func(string, error)) (added int, err error) {
	for _, p := range paths {
		id, err := w.n.Add(p)
		if trace != nil {
			trace(p, err)
		}
		switch {
		case err == nil:
			w.watched[p] = true
			w.ids[p] = id
			w.noteFile(v, p)
			delete(w.refused, p)
			w.dirty = true
			added++
		case vanished(err):
			return added, fmt.Errorf("add watch on %s: %w", p, err)
		case refused(err), limited(err) && !slices.Contains(v.dirs, p):
			w.refused[p] = err
		default:
			return added, fmt.Errorf("add watch on %s: %w", p, err)
		}
	}
	return added, nil
}

// noteFile notes which file the watch of p, just added for the resolution
// v, is of, if p is v's one file.
func (w *watchSet) noteFile(v *sight, p string) {
	if len(v.files) == 1 && v.files[0] == p && v.file != nil {
		w.fileOf[p] = v.file
		return
	}
	delete(w.fileOf, p)
}

// addAwaited watches the file at path by itself, for a wait for its
// writers, and returns the watch's id if the watch is of the inode of the
// one file describes; zero if it is not, or could not be added. The path
// says so if it still shows the file. If it no longer does, the file may
// have gone before the Add or right after it (the session was held up
// between the two, and the file deleted and the path made a link to a new
// one that may have its inode number): the notifier's word on the watch
// tells, where it can give it. A watch the kernel dropped already was of
// an inode gone for good since the Add, most likely the file's (another
// file would have had to take its place and go again in between): it is
// taken, and its drop, on its way, ends the wait.
func (w *watchSet) addAwaited(path string, file fs.FileInfo, trace func(string, error)) int {
	id, err := w.n.Add(path)
	if trace != nil {
		trace(path, err)
	}
	if err != nil {
		return 0
	}
	w.watched[path], w.ids[path] = true, id
	info, err := os.Lstat(path)
	if err == nil && info.Mode().IsRegular() && sameFile(info, file) {
		w.fileOf[path] = info
		return id
	}
	delete(w.fileOf, path)
	if of, ok := w.n.Inode(id); ok {
		if d, i := fileID(file); of.gone || of.dev == d && of.ino == i {
			return id // the file's, gone from the path since: not the path's file
		}
	}
	return 0
}

// blind returns why no event would tell of a change to what v resolved
// to, if none would: the file's directory refused a watch (the process
// may traverse it but not list it, or may not enter it at all), and
// neither the file's own watch stands in for it, nor, while the file
// cannot be reached, the watch of the directory above, which reports the
// directory made enterable. The session then ends, to poll.
func (w *watchSet) blind(v *sight) error {
	home := v.home
	why := w.refused[home]
	switch {
	case why == nil:
		return nil
	case slices.ContainsFunc(v.files, func(f string) bool { return w.watched[f] }):
		return nil
	case len(v.files) == 0 && w.watched[filepath.Dir(home)]:
		return nil
	}
	return fmt.Errorf("add watch on %s: %w", home, why)
}

// drop forgets the watch of a path the kernel dropped: a removed directory
// or file, or a moved one, which no longer watches the path.
func (w *watchSet) drop(path string) {
	w.n.Remove(path)
	delete(w.watched, path)
	delete(w.ids, path)
	delete(w.fileOf, path)
	w.dirty = true
}

// prune removes the watches, and forgets the names, that v no longer
// needs, but for kept, the own watch of a file a wait is for.
func (w *watchSet) prune(v *sight, kept string, trace func(string)) {
	keep := v.want()
	w.n.Forget(keep)
	for p := range w.wanted {
		if !keep[p] {
			delete(w.wanted, p)
		}
	}
	plan := w.plan(v)
	for p := range w.watched {
		if p != kept && !slices.Contains(plan, p) {
			delete(w.watched, p)
			delete(w.ids, p)
			delete(w.fileOf, p)
			w.dirty = true
			w.n.Remove(p)
			if trace != nil {
				trace(p)
			}
		}
	}
	for p := range w.refused {
		if !slices.Contains(plan, p) {
			delete(w.refused, p)
		}
	}
}

// dirs lists the directories watched for v, sorted: not v's files, nor
// kept, the file a wait's witness watches.
func (w *watchSet) dirs(v *sight, kept string) []string {
	var dirs []string
	for p := range w.watched {
		if p != kept && !slices.Contains(v.files, p) {
			dirs = append(dirs, p)
		}
	}
	slices.Sort(dirs)
	return dirs
}
