package decide

import (
	"io/fs"
	"time"
)

// A refresh is how the decider has the file read again: the path resolved
// (from the root, or from the names events touched), the file read, its
// read judged (with the events the kernel queued by then), then what the
// path depends on watched. Each step is an action the loop carries out,
// whose outcome comes back as the next input.

// next decides what to do once nothing is under way: add the own watch a
// wait asks for, or read again if something asked for it.
func (d *Decider) next(now time.Time) {
	if p := d.wantsOwnWatch(); p != "" {
		d.askOwnWatch(p, false)
		return
	}
	if why, t, ok := d.pending.next(); ok {
		d.refresh(why, t, now)
	}
}

// refresh resolves the path again, reads, and watches what the path now
// depends on; see Resolved. A loop that polls only reads, unless a wait
// holds reads back.
func (d *Decider) refresh(why Reason, t readAfter, now time.Time) {
	if !d.cfg.Events {
		if o, ok := d.wait.mayRead(why, t, false); ok {
			d.read(o, readForRefresh, now)
		}
		return
	}
	d.readAll = d.pending.takeRewatch()
	d.refreshRoot = d.readAll || d.pending.touchedAll
	d.refreshWhy, d.refreshFrom = why, t
	if d.readsFirst(t) {
		d.read(readOrder{why: why, after: t}, readForFirst, now)
		return
	}
	d.resolveForRefresh(t)
}

// resolveForRefresh asks for the refresh's resolution: from the root, or
// resumed from the names events touched since the last.
func (d *Decider) resolveForRefresh(t readAfter) {
	d.out.Next = Action{Kind: Resolve, FromRoot: d.refreshRoot, Touched: d.pending.touched,
		StatFile: t == afterPause && len(d.cfg.Paths) == 1}
	d.phase = resolving
}

// readsFirst reports whether a refresh after t reads before it resolves
// the path again, and hands the read on before the resolution: where the
// kernel's word will cover the read (it said who writes at the last read,
// and a file's own watch reports its opens), of one file, after an event
// (a swap, a rename, a writer's close), with no wait for writers under
// way. Such a read is accepted only on the kernel's word that no writer
// was at work on what it read (see acceptableFirst), whatever the
// resolution finds: the rules that the resolution decides (a file no
// watch heard written, a wait that moved to another file) are all about
// writers the kernel does not tell of. Otherwise it is set aside, as if
// never made, and the refresh goes on in the usual order.
func (d *Decider) readsFirst(t readAfter) bool {
	if d.noFirst {
		d.noFirst = false // this refresh goes in the usual order; the next may read first
		return false
	}
	return d.cfg.Events && d.cfg.Caps.Opens && d.res.One && len(d.cfg.Paths) == 1 && !d.readAll &&
		!d.watches.closes && !d.wait.blocksReads() && (t == afterEvent || t == afterClose)
}

// acceptableFirst reports whether a read made before the refresh's
// resolution (readsFirst) is to be judged and handed on: the kernel's word
// (asked, or the count of the file's openers and the stamps) says no
// writer was at work on what was read, and it found a file, not empty,
// read whole. It changes nothing.
func (d *Decider) acceptableFirst(r *Read) bool {
	if r.Err != nil || r.Empty || r.Torn {
		return false
	}
	if d.readAsked {
		return r.Writers == WritersNone
	}
	id := 0
	if len(d.res.Files) == 1 {
		id = d.watches.own(d.res.Files[0], r.Info)
	}
	return d.openers.known(id, r.Info, d.cfg.Inodes) && d.openers.open == 0 && !d.openers.writing &&
		r.FineTimes && r.Stamp == d.stampBefore
}

// resolvedAfterRead takes the resolution of a refresh whose read was
// handed on before it (readsFirst): the path's watches follow it. Where it
// leads to another file than the one read (the path moved meanwhile, or
// the resolution, resumed from the names events touched, kept a stat from
// before a change no event named), the file is read again, in the usual
// order, by a resolution from the root: a read made first again could
// disagree with a resumed resolution for ever.
func (d *Decider) resolvedAfterRead(r Resolution, now time.Time) {
	d.res = r
	d.pending.resolved(d.refreshRoot)
	d.pending.unwatched = false
	if r.File == nil || d.firstRead == nil || !d.cfg.Inodes.SameFile(r.File, d.firstRead) {
		d.pending.reread, d.pending.touchedAll = true, true
		d.noFirst = true
	}
	d.firstRead = nil
	d.wait.refreshDone()
	d.afterRead(d.readAll, now)
}

// read asks for a read for o. Where the file's own watch tells who holds
// it open (counted), the read asks the kernel nothing: the events the
// kernel queued by now are taken first, with the file's stamp before
// them, and the read is judged by the count and the stamps (see
// judgeReadNow). Elsewhere it asks the kernel.
func (d *Decider) read(o readOrder, why readFor, _ time.Time) {
	d.order, d.readFor = o, why
	d.readVia = d.cfg.Events
	d.stampBefore, d.restamped = 0, false
	if d.counted() && o.after != afterCap && (why != readForFirst || o.after == afterClose) {
		// A read made first after a swap or a rename asks the kernel: it
		// most likely finds another file than the one counted. So does the
		// cap's, of writes that never let up: a lease let go at once falls
		// between two writers far more often than the queue, the stat and
		// the read all do.
		d.out.Next = Action{Kind: TakeQueue, StampFirst: true}
		d.phase = queueingFirst
		return
	}
	d.askRead(true)
}

// askRead asks for the read of d.order; ask says whether it asks the
// kernel of the file's writers.
func (d *Decider) askRead(ask bool) {
	d.readAsked = ask
	d.out.Next = Action{Kind: ReadNow, Why: d.order.why, Via: d.readVia, Ask: ask, First: d.readFor == readForFirst}
	d.phase = reading
}

// counted reports whether the file the path leads to is watched by itself
// and its openers counted (openers): its reads need no lease. Not for a
// read that is to ask the kernel again (a writer it still counted at a
// close, or someone the count says held the file at the last two reads
// without writing).
func (d *Decider) counted() bool {
	if !d.cfg.Caps.Opens || !d.cfg.Events || d.writer.counted || d.openers.asks() || len(d.res.Files) != 1 || d.res.File == nil {
		return false
	}
	return d.openers.known(d.watches.own(d.res.Files[0], d.res.File), d.res.File, d.cfg.Inodes)
}

// queueTaken takes the events the kernel queued before a read, with the
// facts gathered for them: the read is judged with them taken.
func (d *Decider) queueTaken(q *Queue, now time.Time) {
	for _, batch := range [...]struct {
		evs []Event
		f   *Facts
	}{{q.Queued, &q.QueuedFacts}, {q.Late, &q.LateFacts}} {
		for _, ev := range batch.evs {
			d.takeEvent(ev, batch.f, now)
		}
	}
}

// writersOf says what is known of the writers of the file r read: the
// kernel's word where the read asked it, which, if it says none holds the
// file, starts the count of the file's openers where its own watch is in
// place; the count's where it did not ask (see writersCounted).
func (d *Decider) writersOf(r *Read) (w Writers, sure bool) {
	if r.Err != nil {
		return WritersUnknown, true
	}
	if !d.readAsked {
		return d.writersCounted(r)
	}
	id := 0
	if len(d.res.Files) == 1 {
		id = d.watches.own(d.res.Files[0], r.Info)
	}
	switch {
	case r.Writers == WritersNone && id != 0 && d.cfg.Caps.Opens:
		d.openers.start(id, r.Info)
	case r.Writers == WritersOpen && d.openers.known(id, r.Info, d.cfg.Inodes):
		d.openers.heldOpen()
	case r.Writers != WritersNone:
		d.openers.forget()
	}
	return r.Writers, true
}

// writersCounted is the count's word on the writers of the file r read,
// the queue taken right before it (see openers): open once a write was
// heard since the last writer's close, or where the file's stamp moved
// since the queue's (a writer began meanwhile, on a filesystem whose
// change times tell every change); none where no one counted holds it.
// sure is false while someone counted holds the file without having
// written (the kernel is asked at the next read: see heldUnsure), and
// where the read found another file than the one counted (the path was
// made to lead elsewhere meanwhile: it is read again, asking the kernel).
func (d *Decider) writersCounted(r *Read) (Writers, bool) {
	id := 0
	if len(d.res.Files) == 1 {
		id = d.watches.own(d.res.Files[0], r.Info)
	}
	if !d.openers.known(id, r.Info, d.cfg.Inodes) {
		return WritersUnknown, false
	}
	w, sure := d.openers.say()
	if w == WritersNone && r.FineTimes && r.Stamp != d.stampBefore {
		w = WritersOpen
	}
	return w, sure
}

// vouched reports whether the kernel's word on the read r's writers, w,
// vouches for it whole: no writer held the file when it was read, and none
// changed it meanwhile. Asked, the kernel's none says so (see
// Read.Writers); counted, none says so where the file's change times tell
// every change and its stamp did not move since the queue was taken.
// Elsewhere none holds only for what was queued before the read, and for
// a set's files each on its own: the events queued since are taken before
// it is accepted (laterWriter).
func (d *Decider) vouched(r *Read, w Writers) bool {
	if w != WritersNone || !d.res.One {
		// A set's files are each whole, but a set rewritten file by file
		// may be read between two of them: the events queued since tell.
		return false
	}
	return d.readAsked || r.FineTimes && r.Stamp == d.stampBefore
}

// judgeReadNow judges the read just made; a read acceptable if no later
// writer began is judged again with the events the kernel queued by now
// (see laterWriter).
func (d *Decider) judgeReadNow(r Read, now time.Time) {
	if d.readFor == readForFirst {
		if !d.acceptableFirst(&r) {
			// Set aside: the refresh goes on in the usual order.
			d.readFor = readForRefresh
			d.resolveForRefresh(d.order.after)
			return
		}
		d.firstRead = r.Info
	}
	var via fs.FileInfo
	if d.readVia && d.readFor != readForFirst {
		via = d.res.File
	}
	w, sure := d.writersOf(&r)
	r.Writers = w
	switch {
	case r.Err == nil:
		d.watches.closes = r.Writers == WritersUnknown
	case r.Missing:
		// Whoever makes the file next may be a writer the kernel will not
		// tell of, whose close only the directory hears.
		d.watches.closes = true
	}
	var v outcome
	switch {
	case !sure && w == WritersUnknown:
		d.pending.reread = true // another file: read again, asking the kernel
		v = readHeld
	case !sure:
		v = d.heldUnsure(&r, now)
	default:
		v = d.judgeRead(&r, &d.order, via, d.vouched(&r, w), now)
	}
	if v == readRetried {
		d.retry.later(d.order, now)
		d.out.Forward = ForwardFailure
		d.judgedEvents()
		d.afterJudgment(now)
		return
	}
	d.retry.done()
	if v == readAskQueue {
		d.queuedRead = r
		d.out.Next = Action{Kind: TakeQueue, AwaitTruncation: r.Err == nil && r.Size == 0}
		d.phase = queueing
		return
	}
	if v == readAccepted {
		v = d.closedEmpty(&r, d.order.after, now)
	}
	d.readJudged(&r, v, now)
}

// countFromBelief starts the count of the openers of the file r read,
// where the kernel did not say who writes it (not the file's owner, and no
// CAP_LEASE; leases off) and the file's times had the read accepted: they
// took no writer to be at work on it, as the count takes the kernel's
// "none" where it is given. From then on the file's own watch tells every
// writer that opens it, and its reads are judged by the count, as the
// owner's are; a writer that had it open already, and paused past the
// times' pause, is heard once it writes again (docs/reliability.md).
func (d *Decider) countFromBelief(r *Read) {
	if !d.cfg.Caps.Opens || len(d.res.Files) != 1 {
		return
	}
	if id := d.watches.own(d.res.Files[0], r.Info); id != 0 {
		d.openers.start(id, r.Info)
	}
}

// readJudged carries out what became of a read: one accepted is handed
// on, and, where the kernel did not say who writes, starts the count of
// the file's openers (countFromBelief).
func (d *Decider) readJudged(r *Read, v outcome, now time.Time) {
	if v == readAccepted {
		d.accept(r, now)
		d.out.Forward = ForwardRead
		if d.readAsked && r.Err == nil && r.Writers == WritersUnknown {
			d.countFromBelief(r)
		}
	}
	d.judgedEvents()
	d.afterJudgment(now)
}

// judgedEvents carries out what events taken decided of the watches: the
// loop forgets those the kernel dropped.
func (d *Decider) judgedEvents() {
	for _, p := range d.pending.takeDropped() {
		d.watches.drop(p)
		d.out.Dropped = append(d.out.Dropped, p)
	}
}

// afterJudgment goes on once a read was judged: with the own watch a wait
// it began asks for, then with what the read was for.
func (d *Decider) afterJudgment(now time.Time) {
	if p := d.wantsOwnWatch(); p != "" {
		d.askOwnWatch(p, true)
		return
	}
	d.readDone(now)
}

// readDone goes on from a read judged to what follows it: the watches it
// planned.
func (d *Decider) readDone(now time.Time) {
	switch {
	case !d.cfg.Events:
		d.next(now) // a loop that polls watches nothing
	case d.readFor == readForFirst:
		d.out.Next = Action{Kind: Resolve, FromRoot: d.refreshRoot, Touched: d.pending.touched}
		d.phase = resolvingAfter
	case d.readFor == readForRefresh:
		d.wait.refreshDone()
		d.afterRead(d.readAll, now)
	default:
		d.afterRead(false, now)
	}
}

// lookRead does what a look decided, once the path holds still: read, or
// wait for a writer a changed stat suggests.
func (d *Decider) lookRead(now time.Time) {
	switch d.lookKind {
	case lookStatChanged:
		d.statChanged(d.lookWhy, now)
		d.next(now)
	case lookRead:
		d.read(readOrder{why: d.lookWhy, after: afterEvent}, readForLook, now)
	default:
		d.read(readOrder{why: d.lookWhy, after: afterWait}, readForLook, now)
	}
}

// readRetry is the retry of a read that failed for a reason of the
// process, not of the file: too many open files, no memory, a signal. The
// file may be fine, and nothing about it will change to send an event, so
// the read is made again, after a backoff, until it reads.
type readRetry struct {
	bo    *Backoff
	at    time.Time // when the read is due again; zero if no retry is due
	order readOrder // the read that failed
}

// later schedules the read o again, after the next step of the backoff.
func (r *readRetry) later(o readOrder, now time.Time) {
	r.order, r.at = o, now.Add(r.bo.Next(0))
}

// done says that a read was made that needs no retry: the backoff starts
// again from its first step.
func (r *readRetry) done() {
	r.at = time.Time{}
	r.bo.Reset()
}

// fired returns the read to make again, now that it is due.
func (r *readRetry) fired() readOrder {
	r.at = time.Time{}
	return r.order
}
