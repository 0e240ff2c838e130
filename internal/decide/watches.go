package decide

import (
	"io/fs"
	"path/filepath"
	"slices"
)

// ErrKind is what an error of the notifier says, as the loop classifies
// it: what the decider makes of a watch that could not be added.
type ErrKind uint8

const (
	ErrOther    ErrKind = iota // anything else: the loop ends, and is re-armed
	ErrVanished                // the path vanished under it: the path is resolved again
	ErrRefused                 // permission was refused: done without, while another watch stands in
	ErrLimited                 // a kernel limit (no watches left): done without, where it is not needed
)

// AddResult is what adding one watch came to: its id, or why it failed.
type AddResult struct {
	ID   int
	Err  error
	Kind ErrKind // what Err says; ignored when Err is nil
}

// WatchError is a watch the loop could not add, or does without where
// nothing stands in for it: the error a loop ends on.
type WatchError struct {
	Path string
	Err  error
}

func (e *WatchError) Error() string { return "add watch on " + e.Path + ": " + e.Err.Error() }
func (e *WatchError) Unwrap() error { return e.Err }

// watchSet is what the loop's notifier watches, as the decider has had it
// added: the one owner of that account. A resolution of the path says what
// it should be (plan); what is missing is added after each read, and what
// the path no longer needs removed.
type watchSet struct {
	caps    Caps
	stats   Inodes
	watched map[string]WatchKind   // paths watched, directories and files by themselves, and what their watches report
	ids     map[string]int         // the id of each watched path's watch
	fileOf  map[string]fs.FileInfo // the file each watch of a file by itself was added for, where known
	refused map[string]error       // paths a watch was refused on, and why; tried again at each look
	dirty   bool                   // watched changed since the loop was last told
	// closes says that the kernel did not say, at the last read, who
	// holds the file open for writing, or that the last read found no
	// file: a creator that closes before the new file's own watch is added
	// is then heard only through the file's directory, which is asked for
	// its entries' closes.
	closes bool

	planned []planned // plan's buffer
}

func newWatchSet(c Caps, st Inodes) watchSet {
	return watchSet{caps: c, stats: st, watched: make(map[string]WatchKind), ids: make(map[string]int),
		fileOf: make(map[string]fs.FileInfo), refused: make(map[string]error)}
}

// planned is a path to watch, and what its watch is to report.
type planned struct {
	path string
	kind WatchKind
}

// plan lists what to watch for the resolution r, each path with the least
// its watch must report: the directories it depends on, for their entries
// (and, where a file of theirs cannot be watched by itself, for their
// entries' writes; the file's own directory, where the kernel does not say
// who writes, for its entries' closes); where the notifier can afford them, every other
// directory the resolution went through, for its own move (a plain
// ancestor renamed or exchanged moves the path), and the files themselves,
// for their writes, closes and attributes (a write through another of a
// file's names, a hard link or the source of a bind mount, is reported
// only there).
//
// The list is the set's own buffer, good until the next plan: each caller
// is done with it before it returns (a kubelet update plans a few times,
// and its list grew from nothing each time: 12 allocations an update).
func (w *watchSet) plan(r *Resolution) []planned {
	out := w.planned[:0]
	defer func() { w.planned = out[:0] }()
	add := func(p string, k WatchKind) {
		if i := slices.IndexFunc(out, func(q planned) bool { return q.path == p }); i >= 0 {
			out[i].kind |= k
			return
		}
		out = append(out, planned{p, k})
	}
	dir := watchDir
	if !w.caps.Files || slices.ContainsFunc(r.Files, func(f string) bool { return w.refused[f] != nil }) {
		dir = watchDirFiles // a file's writes come only through its directory
	}
	for _, d := range r.Dirs {
		add(d, dir)
	}
	if w.closes && w.caps.Files && r.Home != "" {
		add(r.Home, WatchCloses)
	}
	if w.refused[r.Home] != nil && r.HomeParent != "" {
		// The file's directory cannot be watched: the one above reports
		// it made enterable (its attributes), replaced or removed.
		add(r.HomeParent, watchDirFiles)
	}
	if w.caps.Ancestors {
		for _, d := range r.Searched {
			add(d, watchAncestor)
		}
	}
	if w.caps.Files {
		file := watchFile
		if w.caps.Opens && r.One && r.DataLink == "" {
			// Who holds it open: see openers. Not a kubelet payload's
			// file: kubelet writes a payload whole and swaps it in, and
			// reads the one in place at each update to compare (two events
			// for nothing); a payload edited in place is asked of.
			file |= WatchOpens
		}
		for _, f := range r.Files {
			add(f, file)
		}
	}
	return out
}

// missing lists what the plan for r watches that is not watched yet, or
// not for all it is to report (all of it if all). read is the file of the
// read the adds follow, nil if they follow none (see ofAnother).
func (w *watchSet) missing(r *Resolution, read fs.FileInfo, all bool) []planned {
	var out []planned
	for _, p := range w.plan(r) {
		if all || w.watched[p.path]&p.kind != p.kind || w.ofAnother(r, p.path, read) {
			out = append(out, p)
		}
	}
	return out
}

// ofAnother reports whether the watch of p, r's one file, is of another
// file than the one r led to, and that one was read: the file that had the
// name before was renamed over. Its watch hears nothing of the one there
// now; added again, it is that one's, and the old file's end, which comes
// on the old watch, is of no file of the path's (see replaced). Only after
// a read of the file r leads to, whose adds are followed by a check of the
// path (a write between the read and the Add shows in the stat): where
// the file's directory cannot be listed, the old file's end is the only
// word of the new file, and it must be taken as the path's, to read what
// is there now.
func (w *watchSet) ofAnother(r *Resolution, p string, read fs.FileInfo) bool {
	of := w.fileOf[p]
	return of != nil && r.File != nil && read != nil && len(r.Files) == 1 && r.Files[0] == p &&
		!w.stats.SameFile(of, r.File) && w.stats.SameFile(read, r.File)
}

// stillMissing is missing(r, false) once adds are made, without the paths
// refused: a file's watch refused has its directories report its writes.
func (w *watchSet) stillMissing(r *Resolution, read fs.FileInfo) []planned {
	return slices.DeleteFunc(w.missing(r, read, false), func(p planned) bool { return w.refused[p.path] != nil })
}

// inPlan reports whether the plan for r watches p.
func inPlan(plan []planned, p string) bool {
	return slices.ContainsFunc(plan, func(q planned) bool { return q.path == p })
}

// added takes what adding a watch on p, for the resolution r, came to, and
// says whether the adding stops there, and on what error. A watch refused
// for want of permission (a directory the process may traverse but not
// list, mode 0711, or not enter, 0700) is done without, as long as another
// stands in for it (see noWatchTells). So is a watch beyond r's dirs that the
// kernel has no room for. Any other failure stops the adding: it ends the
// loop, unless the path vanished, which is resolved again.
func (w *watchSet) added(r *Resolution, pl planned, res AddResult) (stop bool, err error) {
	p := pl.path
	switch {
	case res.Err == nil:
		if id, ok := w.ids[p]; ok && id != res.ID {
			// Another watch than the one the path had: of another inode
			// there now (a directory made again, its old watch's end not
			// taken yet). It reports what it was asked for alone, not
			// what the old one did: taken for the old one's, a directory's
			// closes were counted on, and never came.
			w.watched[p] = 0
		}
		w.watched[p] |= pl.kind
		w.ids[p] = res.ID
		w.noteFile(r, p)
		delete(w.refused, p)
		w.dirty = true
		return false, nil
	case res.Kind == ErrRefused, res.Kind == ErrLimited && !slices.Contains(r.Dirs, p):
		w.refused[p] = res.Err
		return false, nil
	}
	return true, &WatchError{Path: p, Err: res.Err}
}

// noteFile notes which file the watch of p, just added for the resolution
// r, is of, if p is r's one file.
func (w *watchSet) noteFile(r *Resolution, p string) {
	if len(r.Files) == 1 && r.Files[0] == p && r.File != nil {
		w.fileOf[p] = r.File
		return
	}
	delete(w.fileOf, p)
}

// own is the id of the watch of the file at path by itself, if there is
// one and it was added for the file info describes; zero otherwise.
func (w *watchSet) own(path string, info fs.FileInfo) int {
	if of := w.fileOf[path]; of != nil && w.stats.SameFile(of, info) {
		return w.ids[path]
	}
	return 0
}

// ownAdded takes the watch of the awaited file at path by itself, added
// with id; file, if not nil, is the file the path showed right after.
func (w *watchSet) ownAdded(path string, id int, file fs.FileInfo) {
	w.watched[path] |= watchFile
	w.ids[path] = id
	if file != nil {
		w.fileOf[path] = file
		return
	}
	delete(w.fileOf, path)
}

// noWatchTells returns why no event would tell of a change to what r resolved
// to, if none would: the file's directory refused a watch (the process may
// traverse it but not list it, or may not enter it at all), and neither
// the file's own watch stands in for it, nor, while the file cannot be
// reached, the watch of the directory above, which reports the directory
// made enterable. The loop then ends, to poll.
func (w *watchSet) noWatchTells(r *Resolution) error {
	why := w.refused[r.Home]
	switch {
	case why == nil:
		return nil
	case slices.ContainsFunc(r.Files, func(f string) bool { return w.watched[f] != 0 }):
		return nil
	case len(r.Files) == 0 && r.HomeParent != "" && w.watched[r.HomeParent] != 0:
		return nil
	}
	return &WatchError{Path: r.Home, Err: why}
}

// replaced reports whether id, the watch an event on a watched inode itself
// came on, is no longer path's: the loop has since watched the file that
// took the name (a rename-over's, whose old file's end comes on the old
// file's watch after its successor was read and watched). Taken as the
// path's, that end would have the path's watch forgotten and added again,
// and the file read again; and what came on the live watch between its
// removal and its return was lost (a writer's close: the update waited
// MaxWriterWait).
func (w *watchSet) replaced(path string, id int) bool {
	cur := w.ids[path]
	if id == 0 || cur == 0 || id == cur {
		return false
	}
	for _, other := range w.ids {
		if other == id {
			return false // a watch in use (a directory's, or the inode's under another name)
		}
	}
	return true
}

// closesOf reports whether the directory of the file at path reports its
// entries' closes.
func (w *watchSet) closesOf(path string) bool {
	return w.watched[filepath.Dir(path)]&WatchCloses != 0
}

// cameOn reports whether an event on path that came on the watch id (0:
// on its directory's) may tell of path's watch: not if it came on another
// watch of path's inode (the awaited writer's file's, taken whatever the
// path came to since), whose end is not the end of the watch path has now.
func (w *watchSet) cameOn(path string, id int) bool {
	return id == 0 || w.ids[path] == id
}

// drop forgets the watch of a path the kernel dropped: a removed directory
// or file, or a moved one, which no longer watches the path.
func (w *watchSet) drop(path string) {
	delete(w.watched, path)
	delete(w.ids, path)
	delete(w.fileOf, path)
	w.dirty = true
}

// prune forgets the watches that r no longer needs, but for kept, the own
// watch of a file a wait is for, and returns them, for the loop to
// remove.
func (w *watchSet) prune(r *Resolution, kept string) []string {
	plan := w.plan(r)
	var removed []string
	for p := range w.watched {
		if p != kept && !inPlan(plan, p) {
			removed = append(removed, p)
		}
	}
	slices.Sort(removed) // the same order every time: map order is not
	for _, p := range removed {
		delete(w.watched, p)
		delete(w.ids, p)
		delete(w.fileOf, p)
		w.dirty = true
	}
	for p := range w.refused {
		if !inPlan(plan, p) {
			delete(w.refused, p)
		}
	}
	return removed
}

// dirs lists the directories watched for r, sorted: not r's files, nor
// kept, the file a wait's own watch watches.
func (w *watchSet) dirs(r *Resolution, kept string) []string {
	var dirs []string
	for p := range w.watched {
		if p != kept && !r.isFile(p) {
			if dirs == nil {
				dirs = make([]string, 0, len(w.watched)) // grown once, not from nothing
			}
			dirs = append(dirs, p)
		}
	}
	slices.Sort(dirs)
	return dirs
}
