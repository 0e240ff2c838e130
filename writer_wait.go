package file

import (
	"io/fs"
	"slices"
)

// writerWait is what a session knows of the writers a wait is for: which
// file they write, how many writes were heard, and the file's own watch,
// its witness. A watch is of one inode for as long as that inode lives, so
// what comes on it is that file's, whatever name the path shows now, even
// where another file was given its inode number since (which no stat can
// tell from the first).
type writerWait struct {
	writes int         // in-place writes seen, counted to tell whether a writer began
	file   fs.FileInfo // the file a wait for writers is for; nil if not known
	seen   int         // writes seen when file was taken: see changedUnheard
	restat bool        // the path may lead elsewhere since file was taken: the next write says which file is written

	path  string // where file was found, to watch it by itself
	watch int    // the id of file's own watch; zero if it has none
	gone  bool   // its own watch said it is gone for good
}

// begin notes the file a wait for writers begins for (nil: not known),
// and path, where it was found ("" if not known). Where the notifier can
// watch a file by itself (files), the wait takes the file's own watch as
// its witness: the one the path has if it was added for that file, or one
// the session adds now (asked). Not one of dropped, which an event taken
// in the same batch said went: the session forgets it once the batch is
// judged, and nothing comes on it after that.
func (w *writerWait) begin(info fs.FileInfo, path string, files bool, f facts, dropped []string) {
	w.file, w.restat, w.seen = info, false, w.writes
	w.path, w.watch, w.gone = "", 0, false
	if info == nil || path == "" || !files {
		return
	}
	w.path = path
	if !slices.Contains(dropped, path) {
		w.watch = f.ownWatch(path, info)
	}
}

// asked is the path of the file a wait is for, while the wait (running if
// waiting) has no witness yet and asks the session for one; "" otherwise.
func (w *writerWait) asked(waiting bool) string {
	if w.path == "" || w.watch != 0 || !waiting {
		return ""
	}
	return w.path
}

// watched takes the id of the own watch the session added on the awaited
// file, once it found the file there still: the file's witness. Zero says
// it could not (the file is no longer there, or is not that file), and
// the wait goes on without a witness.
func (w *writerWait) watched(id int) {
	w.watch = id
	if id == 0 {
		w.path = "" // not asked again
	}
}

// kept is the path of the witness, which the session keeps while the wait
// (running if waiting) holds, whatever the path leads to; "" if none.
func (w *writerWait) kept(waiting bool) string {
	if w.watch == 0 || !waiting {
		return ""
	}
	return w.path
}

// witnessed says what an event on the witness asks, if that is where it
// came, while the wait runs (waiting): the writer's writes and its close,
// whatever name the path shows now; the file gone for good, which leaves
// the wait nothing to wait for, even where the path leads to a file given
// its inode number since.
func (w *writerWait) witnessed(ev event, waiting bool) (eventKind, bool) {
	if !w.on(ev, waiting) {
		return 0, false
	}
	switch {
	case ev.has(opGone):
		w.gone = true
		return eventLook, true
	case ev.has(opWrite):
		return eventWrite, true
	case ev.has(opClose):
		return eventClosed, true
	}
	return 0, false
}

// on reports whether ev came on the witness while the wait runs
// (waiting).
func (w *writerWait) on(ev event, waiting bool) bool {
	return ev.watch != 0 && ev.watch == w.watch && waiting
}

// elsewhere reports whether the path, one file's (v), leads now to another
// file than the one the wait is for, or to none. Not known is not
// elsewhere.
func (w *writerWait) elsewhere(v *sight) bool {
	if !v.one || w.file == nil {
		return false // a set's resolution names no file
	}
	if w.gone {
		return true // whatever the path leads to, even with its inode number
	}
	return v.file == nil || !sameFile(w.file, v.file)
}

// changedUnheard reports whether the file the wait is for, by device and
// inode number, is now (cur: the file the path leads to) of another size
// or modification time with no write heard since the wait began: a change
// no event told of (the watch was not in place, or its events were lost),
// or another file, made in its place at once and given the freed inode's
// number. A wait begun by a write event never answers yes: seen is taken
// before that write is counted.
func (w *writerWait) changedUnheard(cur fs.FileInfo) bool {
	if w.file == nil || w.writes != w.seen || cur == nil {
		return false
	}
	return cur.Size() != w.file.Size() || !cur.ModTime().Equal(w.file.ModTime())
}
