package file

// due is what the judge asks the session to do next: read again (and how),
// add every watch again, and from where to resolve the path.
type due struct {
	look    bool // a relevant event asks to resolve and read again
	fresh   bool // and what is read may have been written where no watch saw it
	readNow bool // the writer closed the file: read it, and believe what is read
	rewatch bool // events were lost: add every watch again too

	touched    map[string]bool // paths events named since the last resolution
	touchedAll bool            // events were lost since the last resolution: resolve from the root

	drop []string // watches the kernel dropped, for the session to forget
}

// touch notes that an event named path since the last resolution v, and
// reports whether it is a name on the way to the file (not the file
// itself, which in-place writes name): the path may lead elsewhere now.
func (d *due) touch(path string, v *sight) bool {
	d.touched[path] = true
	return v.onTheWay(path)
}

// takeDropped returns the watches the kernel dropped since it was last
// asked, for the session to forget.
func (d *due) takeDropped() []string {
	dropped := d.drop
	d.drop = d.drop[:0]
	return dropped
}

// next says what the session is to do now, if anything: read again (with
// the reason and trust it is to read with), because an event or a read
// asked for it. It takes the request: asking again says no, unless
// something asked again since.
func (d *due) next() (Reason, trust, bool) {
	switch {
	case d.readNow:
		d.look, d.readNow = false, false
		return ReasonWrite, closedByWriter, true
	case d.look:
		d.look = false
		return ReasonEvent, doubtful, true
	}
	return "", 0, false
}

// lost takes the word that events were lost, a writer's close or another's
// writes perhaps among them: every watch is added again and the file read
// again, from a resolution from the root, as where no watch saw writers;
// no close taken before vouches for what is read.
func (d *due) lost() {
	d.rewatch, d.look, d.readNow = true, true, false
	d.touchedAll, d.fresh = true, true
}

// resolved takes a new resolution of the path: from the root if all, else
// resumed from the names touched since the last. Nothing is touched since.
func (d *due) resolved(all bool) {
	clear(d.touched)
	if all {
		d.touchedAll = false
	}
}

// fromRoot reports whether the next resolution is to start from the root:
// events were lost, so nothing says which names changed.
func (d *due) fromRoot() bool { return d.touchedAll }

// touchedName reports whether an event named path since the last
// resolution: where a resumed resolution starts.
func (d *due) touchedName(path string) bool { return d.touched[path] }

// takeRewatch reports, once, whether every watch is to be added again.
func (d *due) takeRewatch() bool {
	all := d.rewatch
	d.rewatch = false
	return all
}

// watchesAdded takes what the session found after adding watches that a
// read's resolution planned: whether the chain moved while they were
// added, and, if not, the subject's stat now (st) against the stat of the
// last read made (readSig).
func (d *due) watchesAdded(moved bool, st, readSig signature) {
	switch {
	case moved:
		// The chain moved while the watches were added: look again, at
		// what no watch saw being written.
		d.look, d.fresh = true, true
		d.touchedAll = true // no event says where
	case st != 0 && st != readSig:
		// The file changed where no watch saw it: a writer may be at work
		// there, unseen. Its writes from now on come as events; look
		// again as where no watch saw writers, which waits for one only
		// if the file says it was written lately (a kubelet payload
		// older than its ..data link was not). A file that is not there
		// has no writer to wait for: its return comes as events, now
		// watched for, and a wait for quiet would only hold back the read
		// they ask for.
		d.look, d.fresh = true, true
	}
}
