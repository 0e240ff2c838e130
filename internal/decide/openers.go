package decide

import "io/fs"

// openers is what the file's own watch told of the processes that hold
// the file open, so that a read of it needs no lease (see Caps.Opens):
// how many opened it and have not closed it since, and whether one wrote
// it since the last writer's close. The kernel queues a process's open
// before the open can change anything (vfs_open, before O_TRUNC truncates),
// so a writer at work on the file when the queue is taken has been
// counted.
//
// The count is known from a moment the kernel said no one held the file
// open for writing, its own watch already in place (a read's lease probe):
// before that, a writer that opened the file before the watch came would be
// missing from it. It is never below zero: a reader that had the file open
// at that moment closes it uncounted. Two opens the kernel merged into one
// event (the same event twice in a row, still queued) count as one: a
// writer whose open was merged so with another's, and that closed second,
// is missed; docs/reliability.md has the limit.
type openers struct {
	watch   int         // the own watch counted from; zero if none
	file    fs.FileInfo // the file that watch is of
	open    int         // opens since, less closes
	writing bool        // a write heard since the last writer's close
	// unsure counts the reads in a row at which someone counted held the
	// file without having written it: a writer about to write (its
	// truncation's event comes a moment after its open's) writes within
	// the pause the first is given; one still so at the second read is
	// most likely a reader, and the kernel is asked.
	unsure int
}

// known reports whether the count is kept, from the own watch id of the
// file info describes.
func (o *openers) known(id int, info fs.FileInfo, st Inodes) bool {
	return o.watch != 0 && o.watch == id && info != nil && st.SameFile(info, o.file)
}

// start begins the count, from none, of the file info describes, watched
// by itself by the watch id: the kernel just said that no one holds it
// open for writing.
func (o *openers) start(id int, info fs.FileInfo) {
	*o = openers{watch: id, file: info}
}

// heldOpen takes the kernel's word that a writer holds the file the count
// is of, asked at a read: the count stands where it has someone holding
// the file (that is the writer, yet to write), and is forgotten where it
// has no one (it missed a writer).
func (o *openers) heldOpen() {
	if o.open == 0 {
		o.forget()
		return
	}
	o.unsure = 0
}

// asks reports whether the next read is to ask the kernel rather than go
// by the count: someone held the file without writing at the last two
// reads.
func (o *openers) asks() bool { return o.unsure >= 2 }

// forget stops the count: the kernel said a writer holds the file, or
// could not say, or the watch went.
func (o *openers) forget() { *o = openers{} }

// take counts ev, if it came on the watch counted from, and reports
// whether it was an open or a reader's close, which tell nothing else. A
// writer's write and close are counted and go on to be judged as ever; the
// watch's end ends the count.
func (o *openers) take(ev Event) bool {
	if o.watch == 0 || ev.Watch != o.watch {
		return ev.Has(OpOpen | OpCloseNoWrite)
	}
	switch {
	case ev.Has(OpOpen):
		o.open++
		return true
	case ev.Has(OpCloseNoWrite):
		o.open = max(0, o.open-1)
		return true
	case ev.Has(OpRemove):
		o.forget()
	case ev.Has(OpWrite):
		o.writing = true
	case ev.Has(OpClose):
		o.open, o.writing = max(0, o.open-1), false
	}
	return false
}

// say is the count's word on the file's writers: WritersOpen once a
// write was heard since the last writer's close, WritersNone while no one
// who opened the file since holds it. sure is false while someone who
// opened it holds it and nothing was written since: a reader (someone
// viewing the file, a program that keeps it open) or a writer that has not
// written yet, which only the kernel's lease can tell apart.
func (o *openers) say() (w Writers, sure bool) {
	switch {
	case o.writing:
		o.unsure = 0
		return WritersOpen, true
	case o.open > 0:
		o.unsure++
		return WritersOpen, false
	}
	o.unsure = 0
	return WritersNone, true
}
