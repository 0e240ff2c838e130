package decide

import "io/fs"

// awaitedWriter is what the watch knows of the writers a wait is for:
// which file they write, how many writes were heard, and the file's own
// watch. A watch is of one inode for as long as that inode lives, so what
// comes on it is that file's, whatever name the path shows now, even where
// another file was given its inode number since (which no stat can tell
// from the first): the file's close on it ends the wait, and its drop (the
// inode gone, not moved) ends it too.
//
// It is the one owner of that watch's part in a wait: the decider asks the
// loop to add it (wantsOwnWatch), takes its id (ownWatchAdded), keeps it
// while the wait holds (keptWatch), and hears what comes on it
// (fromOwnWatch).
type awaitedWriter struct {
	writes int         // in-place writes heard, counted to tell whether a writer began
	file   fs.FileInfo // the file a wait for writers is for; nil if not known
	seen   int         // writes heard when file was taken: see changedUnheard
	restat bool        // the path may lead elsewhere since file was taken: the next write says which file is written
	// counted says that the kernel still counted a writer when a close
	// was read: the next read asks again, and a writer counted then is one
	// that holds the file (see writerHolds).
	counted bool

	path  string // where file was found, to watch it by itself
	watch int    // the id of file's own watch; zero if it has none
	gone  bool   // its own watch said it is gone for good
}

// begin notes the file a wait for writers begins for (nil: not known), and
// path, where it was found ("" if not known). own is the id of a watch of
// the file by itself that the path has already, added for that file (zero
// if none): where the notifier can watch a file by itself (files), that
// watch is the wait's, or the loop is asked for one.
func (w *awaitedWriter) begin(info fs.FileInfo, path string, files bool, own int) {
	w.file, w.restat, w.seen, w.counted = info, false, w.writes, false
	w.path, w.watch, w.gone = "", 0, false
	if info == nil || path == "" || !files {
		return
	}
	w.path, w.watch = path, own
}

// wantsOwnWatch is the path of the file a wait is for, while the wait
// (running if waiting) has no watch of the file by itself yet and asks the
// loop for one; "" otherwise.
func (w *awaitedWriter) wantsOwnWatch(waiting bool) string {
	if w.path == "" || w.watch != 0 || !waiting {
		return ""
	}
	return w.path
}

// ownWatchAdded takes the id of the watch the loop added on the awaited
// file by itself, once it was found to be of that file. Zero says it could
// not be (the file is no longer there, or is not that file), and the wait
// goes on without one.
func (w *awaitedWriter) ownWatchAdded(id int) {
	w.watch = id
	if id == 0 {
		w.path = "" // not asked again
	}
}

// keptWatch is the path of the awaited file's own watch, which the watch
// keeps while the wait (running if waiting) holds, whatever the path leads
// to; "" if none.
func (w *awaitedWriter) keptWatch(waiting bool) string {
	if w.watch == 0 || !waiting {
		return ""
	}
	return w.path
}

// fromOwnWatch says what an event on the awaited file's own watch asks, if
// that is where it came, while the wait runs (waiting): the writer's
// writes and its close, whatever name the path shows now; the file gone
// for good, which leaves the wait nothing to wait for, even where the path
// leads to a file given its inode number since.
func (w *awaitedWriter) fromOwnWatch(ev Event, waiting bool) (eventKind, bool) {
	if !w.cameOnOwnWatch(ev, waiting) {
		return 0, false
	}
	switch {
	case ev.Has(OpGone):
		w.gone = true
		return eventReread, true
	case ev.Has(OpWrite):
		return eventWrite, true
	case ev.Has(OpClose):
		return eventClosed, true
	}
	return 0, false
}

// cameOnOwnWatch reports whether ev came on the awaited file's own watch
// while the wait runs (waiting).
func (w *awaitedWriter) cameOnOwnWatch(ev Event, waiting bool) bool {
	return ev.Watch != 0 && ev.Watch == w.watch && waiting
}

// elsewhere reports whether the path, one file's (r), leads now to another
// file than the one the wait is for, or to none. Not known is not
// elsewhere.
func (w *awaitedWriter) elsewhere(r *Resolution, st Inodes) bool {
	if !r.One || w.file == nil {
		return false // a set's resolution names no file
	}
	if w.gone {
		return true // whatever the path leads to, even with its inode number
	}
	return r.File == nil || !st.SameFile(w.file, r.File)
}

// changedUnheard reports whether the file the wait is for, by device and
// inode number, is now (cur: the file the path leads to) of another size or
// modification time with no write heard since the wait began: a change no
// event told of (the watch was not in place, or its events were lost), or
// another file, made in its place at once and given the freed inode's
// number. A wait begun by a write event never answers yes: seen is taken
// before that write is counted.
func (w *awaitedWriter) changedUnheard(cur fs.FileInfo) bool {
	if w.file == nil || w.writes != w.seen || cur == nil {
		return false
	}
	return cur.Size() != w.file.Size() || !cur.ModTime().Equal(w.file.ModTime())
}
