package file

// The session's side of watching: resolving the path, and making the watch
// set (watch_set.go) watch what the resolution depends on.

// resolve resolves the subject from the root, wanting each name before it
// is looked up.
func (s *session) resolve() {
	var want func(string)
	if s.events() {
		want = s.want
	}
	s.ws.resolving()
	s.view = s.t.subj.resolve(want, nil, nil)
	s.j.resolved(true)
	s.prev = sight{}
}

// resumeResolve resolves the subject again from the first name an event
// named since the last resolution: what comes before it cannot have
// changed, or an event would have said so. Every name the resolution looks
// up is watched (and wanted) for events on it, through its directory.
func (s *session) resumeResolve() {
	s.prev = s.view
	s.ws.resolving()
	s.view = s.t.subj.resolve(s.want, &s.prev, s.touched)
	s.j.resolved(false)
}

// watchAfterRead adds what the plan watches and is not watched (all of it
// if all), and removes what it no longer needs. Every read is followed by
// it: the read's judgment takes the events queued by then, and a watch the
// kernel dropped among them (the file's own, after a rename over it, the
// only one where its directory cannot be listed) is added again here, on
// whatever the path shows now. A change between the read and the Add
// shows in the stat, and is read again as where no watch saw writers. A
// poll session watches nothing.
func (s *session) watchAfterRead(all bool) error {
	if !s.events() {
		return nil
	}
	if missing := s.ws.missing(&s.view, all); len(missing) > 0 {
		added, err := s.ws.add(&s.view, missing, s.traceAdd)
		if vanished(err) || (err == nil && s.ws.refused[s.view.home] != nil) {
			// A directory vanished under us, or the file's directory
			// refused a watch, which plans the one above: resolve until
			// still.
			err = s.watchChain(false)
		}
		if err != nil {
			return err
		}
		if added > 0 {
			v := s.t.subj.resolve(s.want, nil, nil)
			moved := !v.same(&s.view)
			var st signature
			if !moved {
				st = s.t.subj.stat()
			}
			s.j.watchesAdded(moved, st)
		}
	}
	s.ws.prune(&s.view, s.j.awaitedKept(), s.traceRemove)
	s.tellWatching()
	return nil
}

// watchChain resolves the path and makes the notifier watch exactly what
// the resolution depends on (all of it again if all), resolving again until
// the chain holds still: a path being rebuilt one directory at a time needs
// one round per level. Watches are added before the file is read, so a
// change is either seen by the read or reported by an event. A poll
// session has nothing to watch.
func (s *session) watchChain(all bool) error {
	if !s.events() {
		return nil
	}
	var err error
	for range maxWatchRounds {
		s.resolve()
		var added int
		added, err = s.ws.add(&s.view, s.ws.missing(&s.view, all), s.traceAdd)
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
	s.ws.prune(&s.view, s.j.awaitedKept(), s.traceRemove)
	s.tellWatching()
	if err != nil {
		return err
	}
	return s.ws.blind(&s.view)
}

// tellWatching tells the sink, once it has one, what is watched now, if
// that changed since it was last told.
func (s *session) tellWatching() {
	if s.ws.dirty && s.out != nil {
		s.ws.dirty = false
		var dirs []string
		if s.events() {
			dirs = s.ws.dirs(&s.view)
		}
		s.out.watching(s.mode(), dirs)
	}
}

func (s *session) traceAdd(p string, err error) {
	if traceHook != nil {
		tracef(s.t.path, "add %s: %v", p, err)
	}
}

func (s *session) traceRemove(p string) {
	if traceHook != nil {
		tracef(s.t.path, "remove %s", p)
	}
}
