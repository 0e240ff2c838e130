package file

// chainWatch is a session's resolution of the path, and the watch set
// (watch_set.go) made to watch what it depends on: it resolves, from the
// root or from the names events touched, and adds and removes watches
// after each read. It tells the session (tell) when what is watched
// changed; the judge says from where to resolve, and takes what the
// watches found.
type chainWatch struct {
	subj   subject
	path   string // the subject's name, for traces
	events bool   // false for a session that polls: nothing to watch
	ws     *watchSet
	j      *judge
	tell   func() // the session tells its sink what is watched

	view sight // what the subject's current resolution depends on
	prev sight // the resolution before, kept while the path's is resumed from it

	// The watch set's want and the judge's touchedName, as funcs once:
	// a method value made at each resolution would be an allocation on
	// the way to the callback.
	want    func(string)
	touched func(string) bool
}

// resolve resolves the subject from the root, wanting each name before it
// is looked up.
func (c *chainWatch) resolve() {
	var want func(string)
	if c.events {
		want = c.want
	}
	c.ws.resolving()
	c.view = c.subj.resolve(want, nil, nil)
	c.j.due.resolved(true)
	c.prev = sight{}
}

// resume resolves the subject again from the first name an event named
// since the last resolution: what comes before it cannot have changed, or
// an event would have said so. Every name the resolution looks up is
// watched (and wanted) for events on it, through its directory.
func (c *chainWatch) resume() {
	c.prev = c.view
	c.ws.resolving()
	c.view = c.subj.resolve(c.want, &c.prev, c.touched)
	c.j.due.resolved(false)
}

// afterRead adds what the plan watches and is not watched (all of it if
// all), and removes what it no longer needs. Every read is followed by it:
// the read's judgment takes the events queued by then, and a watch the
// kernel dropped among them (the file's own, after a rename over it, the
// only one where its directory cannot be listed) is added again here, on
// whatever the path shows now. A change between the read and the Add
// shows in the stat, or in a directory gone by its Add, and is read again
// as where no watch saw writers. A poll session watches nothing.
func (c *chainWatch) afterRead(all bool) error {
	if !c.events {
		return nil
	}
	if missing := c.ws.missing(&c.view, all); len(missing) > 0 {
		added, err := c.ws.add(&c.view, missing, c.traceAdd)
		gone := vanished(err)
		if gone || (err == nil && c.ws.refused[c.view.home] != nil) {
			// A directory vanished under us, or the file's directory
			// refused a watch, which plans the one above: resolve until
			// still.
			err = c.watch(false)
		}
		if err != nil {
			return err
		}
		switch {
		case gone:
			// What the read was made through went before its watch came:
			// the read may not be what is there now, and no event may
			// say so (the new watches came after the removal). Look
			// again, as at a chain that moved.
			c.j.due.watchesAdded(true, 0, 0)
		case added > 0:
			v := c.subj.resolve(c.want, nil, nil)
			moved := !v.same(&c.view)
			var st signature
			if !moved {
				st = c.subj.stat()
			}
			c.j.due.watchesAdded(moved, st, c.j.last.readSig)
		}
	}
	c.ws.prune(&c.view, c.j.witnessKept(), c.traceRemove)
	c.tell()
	return nil
}

// watch resolves the path and makes the notifier watch exactly what the
// resolution depends on (all of it again if all), resolving again until
// the chain holds still: a path being rebuilt one directory at a time needs
// one round per level. Watches are added before the file is read, so a
// change is either seen by the read or reported by an event. A poll
// session has nothing to watch.
func (c *chainWatch) watch(all bool) error {
	if !c.events {
		return nil
	}
	var err error
	for range maxWatchRounds {
		c.resolve()
		var added int
		added, err = c.ws.add(&c.view, c.ws.missing(&c.view, all), c.traceAdd)
		all = false
		if err == nil && added == 0 {
			break
		}
		if err != nil && !vanished(err) {
			return err
		}
		// Watches were added, or a path vanished as they were: the
		// resolution may already be stale.
	}
	c.ws.prune(&c.view, c.j.witnessKept(), c.traceRemove)
	c.tell()
	if err != nil {
		return err
	}
	return c.ws.blind(&c.view)
}

func (c *chainWatch) traceAdd(p string, err error) {
	if traceHook != nil {
		tracef(c.path, "add %s: %v", p, err)
	}
}

func (c *chainWatch) traceRemove(p string) {
	if traceHook != nil {
		tracef(c.path, "remove %s", p)
	}
}
