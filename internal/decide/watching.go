package decide

import (
	"path/filepath"
	"slices"
	"time"
)

// How the decider has what the path depends on watched: after each read,
// what the read's resolution plans and is not watched yet, one watch at a
// time; where a path vanished or the file's directory refused its watch,
// the path resolved and watched again until it holds still; and, for a
// wait for a writer, the awaited file by itself.

// afterRead adds what the plan watches and is not watched (all of it if
// all), and removes what it no longer needs. Every read is followed by it:
// the read's judgment takes the events queued by then, and a watch the
// kernel dropped among them (the file's own, after a rename over it, the
// only one where its directory cannot be listed) is added again here, on
// whatever the path shows now. A change between the read and the Add
// shows in the stat, or in a directory gone by its Add, and is read again
// as where no watch saw writers.
func (d *Decider) afterRead(all bool, now time.Time) {
	missing := d.watches.missing(&d.res, d.last.info, all)
	if len(missing) == 0 {
		d.finishAfterRead(now)
		return
	}
	d.adds = addProcedure{left: missing, forRead: true, readAll: all}
	d.addNext(now)
}

// addNext asks for the next watch to add, or goes on once all are added,
// or the adding stopped.
func (d *Decider) addNext(now time.Time) {
	if len(d.adds.left) > 0 {
		d.out.Next = Action{Kind: AddWatch, Path: d.adds.left[0].path, Report: d.adds.left[0].kind}
		d.phase = adding
		return
	}
	if d.adds.forRead {
		if more := d.watches.stillMissing(&d.res, d.last.info); d.adds.err == nil && !d.adds.again && len(more) > 0 {
			// A file's watch was refused after its directories were
			// watched for names alone: they are to report its writes.
			d.adds.left, d.adds.again = more, true
			d.addNext(now)
			return
		}
		d.afterAdds(now)
		return
	}
	d.pathWatchRound(now)
}

// afterAdds goes on once a read's watches are added. A directory that
// vanished under them, or the file's directory refusing a watch (which
// plans the one above), has the path watched until it holds still. What
// the read was made through that went before its watch came leaves the
// read perhaps not what is there now, and no event may say so (the new
// watches came after the removal): it is looked at again, as at a chain
// that moved. Watches added have the path checked for having moved
// meanwhile.
func (d *Decider) afterAdds(now time.Time) {
	a := d.adds
	switch {
	case a.vanished || a.err == nil && d.watches.refused[d.res.Home] != nil:
		d.pathWatch.gone, d.pathWatch.added = a.vanished, a.added
		d.watchPath(false, thenAfterAdds, now)
	case a.err != nil:
		d.fail(a.err)
	default:
		d.addsDone(false, a.added, now)
	}
}

// addsDone ends a read's adds: gone says a path vanished as they were
// made, added lists those watched. The path is checked from the first name
// whose change no watch could tell of while they were added (checkFrom):
// a change elsewhere is told by an event.
func (d *Decider) addsDone(gone bool, added map[string]bool, now time.Time) {
	switch {
	case gone:
		d.pending.watchesAdded(true, 0, 0)
	case len(added) > 0:
		d.out.Next = Action{Kind: CheckPath, Touched: d.checkFrom(added)}
		d.phase = checking
		return
	}
	d.finishAfterRead(now)
}

// checkFrom lists the names the check of the path after a read's adds
// looks up again, from the first of them in the resolution's order on
// (CheckPath's Touched), where added lists the paths just watched:
//   - each name looked up in a directory just watched, whose entries
//     changed unseen until its watch came;
//   - each path just watched, unless a watch of its directory's entries
//     was there before and stays, which tells of its removal or
//     replacement (one left from an earlier resolution alone is removed
//     once the check is done, and its events with it);
//   - the file just watched by itself, whose writes went unseen until then.
//
// In a kubelet update, the new payload's directory is an entry of the
// volume's, watched all along, and only the file is looked up again: one
// lstat, where the check went through the payload's directory too. Where
// none of these is found, the check goes from every path added.
func (d *Decider) checkFrom(added map[string]bool) map[string]bool {
	from := make(map[string]bool, len(added))
	for p := range added {
		dir := filepath.Dir(p)
		if d.res.isFile(p) || added[dir] || d.watches.watched[dir]&WatchNames == 0 || !slices.Contains(d.res.Dirs, dir) {
			from[p] = true
		}
	}
	for n := range d.res.Names {
		if added[filepath.Dir(n)] {
			from[n] = true
		}
	}
	if len(from) == 0 {
		return added
	}
	return from
}

// finishAfterRead removes the watches the path no longer needs, and goes
// on with what is due.
func (d *Decider) finishAfterRead(now time.Time) {
	d.out.Remove = append(d.out.Remove, d.watches.prune(&d.res, d.keptWatch())...)
	d.out.Prune = true
	d.next(now)
}

// watchPath watches the path until it holds still (all: every watch is
// added again in the first round), then goes on with then. A loop that
// polls watches nothing.
func (d *Decider) watchPath(all bool, then pathWatchThen, now time.Time) {
	d.pathWatch.all, d.pathWatch.round, d.pathWatch.then = all, 0, then
	if !d.cfg.Events {
		d.pathHeldStill(now)
		return
	}
	d.out.Next = Action{Kind: Resolve, FromRoot: true}
	d.phase = watchingPath
}

// pathWatchRound ends a round of adds: the path holds still if nothing was
// added; it is resolved again if something was, or a path vanished as it
// was, up to maxWatchRounds times.
func (d *Decider) pathWatchRound(now time.Time) {
	a := d.adds
	switch {
	case a.err == nil && len(a.added) == 0:
	case a.err != nil && !a.vanished:
		d.fail(a.err)
		return
	case d.pathWatch.round < maxWatchRounds:
		d.out.Next = Action{Kind: Resolve, FromRoot: true}
		d.phase = watchingPath
		return
	}
	d.out.Remove = append(d.out.Remove, d.watches.prune(&d.res, d.keptWatch())...)
	d.out.Prune = true
	if a.err != nil {
		d.fail(a.err)
		return
	}
	if err := d.watches.noWatchTells(&d.res); err != nil {
		d.fail(err)
		return
	}
	d.pathHeldStill(now)
}

// pathHeldStill goes on once the path holds still.
func (d *Decider) pathHeldStill(now time.Time) {
	switch d.pathWatch.then {
	case thenLook:
		d.lookRead(now)
	case thenAfterAdds:
		d.addsDone(d.pathWatch.gone, d.pathWatch.added, now)
	}
}

// askOwnWatch asks the loop to watch the awaited file at path by itself;
// inRead says a read's judgment goes on once it is added.
func (d *Decider) askOwnWatch(path string, inRead bool) {
	d.ownThen = inRead
	d.out.Next = Action{Kind: AddOwnWatch, Path: path, Report: watchFile, File: d.writer.file}
	d.phase = addingOwn
}

// ownWatchDone goes on once the awaited file's own watch is added, or not.
func (d *Decider) ownWatchDone(now time.Time) {
	if d.ownThen {
		d.readDone(now)
		return
	}
	d.next(now)
}

// wantsOwnWatch is the path of the file a wait is for, while the wait
// asks the loop for the file's own watch; "" otherwise.
func (d *Decider) wantsOwnWatch() string { return d.writer.wantsOwnWatch(d.wait.blocksReads()) }

// keptWatch is the path of the own watch of the file a wait is for, which
// the watch keeps whatever the path leads to; "" if none.
func (d *Decider) keptWatch() string { return d.writer.keptWatch(d.wait.blocksReads()) }
