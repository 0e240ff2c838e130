package decide

// pending is what the decider has still to ask of the loop once the input
// at hand is taken: resolve and read again (and how), add every watch
// again, and from where to resolve the path.
type pending struct {
	reread    bool // a relevant event asks to resolve and read again
	unwatched bool // and what is read may have been written where no watch saw it
	readNow   bool // the writer closed the file: read it, and accept what is read
	rewatch   bool // events were lost: add every watch again too

	touched    map[string]bool // paths events named since the last resolution
	touchedAll bool            // events were lost since the last resolution: resolve from the root

	drop []string // watches the kernel dropped, for the loop to forget
}

// touch notes that an event named path since the last resolution r, and
// reports whether it is a name on the way to the file (not the file
// itself, which in-place writes name): the path may lead elsewhere now.
func (p *pending) touch(path string, r *Resolution) bool {
	p.touched[path] = true
	return r.onTheWay(path)
}

// takeDropped returns the watches the kernel dropped since it was last
// asked, for the loop to forget.
func (p *pending) takeDropped() []string {
	dropped := p.drop
	p.drop = nil
	return dropped
}

// next says what read, if any, is due now: again (with the reason and what
// it comes after), because an event or a read asked for it. It takes the
// request: asking again says no, unless something asked again since.
func (p *pending) next() (Reason, readAfter, bool) {
	switch {
	case p.readNow:
		p.reread, p.readNow = false, false
		return ReasonWrite, afterClose, true
	case p.reread:
		p.reread = false
		return ReasonEvent, afterEvent, true
	}
	return "", 0, false
}

// lost takes the word that events were lost, a writer's close or another's
// writes perhaps among them: every watch is added again and the file read
// again, from a resolution from the root, as where no watch saw writers;
// no close taken before vouches for what is read.
func (p *pending) lost() {
	p.rewatch, p.reread, p.readNow = true, true, false
	p.touchedAll, p.unwatched = true, true
}

// resolved takes a new resolution of the path: from the root if all, else
// resumed from the names touched since the last. Nothing is touched since.
func (p *pending) resolved(all bool) {
	clear(p.touched)
	if all {
		p.touchedAll = false
	}
}

// takeRewatch reports, once, whether every watch is to be added again.
func (p *pending) takeRewatch() bool {
	all := p.rewatch
	p.rewatch = false
	return all
}

// watchesAdded takes what the loop found after adding watches that a
// read's resolution planned: whether the chain moved while they were
// added, and, if not, the subject's stat now (st) against the stat of the
// last read made (readSig).
func (p *pending) watchesAdded(moved bool, st, readSig Signature) {
	switch {
	case moved:
		// The chain moved while the watches were added: look again, at
		// what no watch saw being written.
		p.reread, p.unwatched = true, true
		p.touchedAll = true // no event says where
	case st != 0 && st != readSig:
		// The file changed where no watch saw it: a writer may be at work
		// there, unseen. Its writes from now on come as events; look
		// again as where no watch saw writers, which waits for one only
		// if the file says it was written lately (a kubelet payload
		// older than its ..data link was not). A file that is not there
		// has no writer to wait for: its return comes as events, now
		// watched for, and a wait for quiet would only hold back the read
		// they ask for.
		p.reread, p.unwatched = true, true
	}
}
