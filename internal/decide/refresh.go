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
	d.out.Next = Action{Kind: Resolve, FromRoot: d.refreshRoot, Touched: d.pending.touched,
		StatFile: t == afterPause && len(d.cfg.Paths) == 1}
	d.phase = resolving
}

// read asks for a read for o.
func (d *Decider) read(o readOrder, why readFor, _ time.Time) {
	d.order, d.readFor = o, why
	d.readVia = d.cfg.Events
	d.out.Next = Action{Kind: ReadNow, Why: o.why, Via: d.readVia}
	d.phase = reading
}

// judgeReadNow judges the read just made; a read believable if no later
// writer began is judged again with the events the kernel queued by now
// (see laterWriter).
func (d *Decider) judgeReadNow(r Read, now time.Time) {
	var via fs.FileInfo
	if d.readVia {
		via = d.res.File
	}
	switch {
	case r.Err == nil:
		d.watches.closes = r.Writers == WritersUnknown
	case r.Missing:
		// Whoever makes the file next may be a writer the kernel will not
		// tell of, whose close only the directory hears.
		d.watches.closes = true
	}
	v := d.judgeRead(&r, &d.order, via, now)
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
	d.readJudged(&r, v, now)
}

// readJudged carries out what became of a read: one believed is handed
// on.
func (d *Decider) readJudged(r *Read, v outcome, now time.Time) {
	if v == readBelieved {
		d.believe(r, now)
		d.out.Forward = ForwardRead
	}
	d.judgedEvents()
	d.afterJudgment(now)
}

// judgedEvents carries out what events taken decided of the watches: the
// loop forgets those the kernel dropped.
func (d *Decider) judgedEvents() {
	for _, p := range d.pending.takeDropped() {
		d.watches.drop(p)
		d.out.Forget = append(d.out.Forget, p)
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
