package decide

import (
	"io/fs"
	"time"
)

// maxWatchRounds bounds how often the path is resolved again while it
// keeps changing as its watches are added; events bring the watch back if
// it gives up.
const maxWatchRounds = 8

// Stats is what the platform's stats tell of files, which this package
// cannot read from an fs.FileInfo alone.
type Inodes interface {
	// SameFile reports whether two stats are of one file.
	SameFile(a, b fs.FileInfo) bool
	// ID returns the file's device and inode number; zeros where the
	// platform has none.
	ID(info fs.FileInfo) (dev, ino uint64)
	// Links returns how many names the file has.
	Links(info fs.FileInfo) uint64
}

// Config is what a Decider is made with.
type Config struct {
	Window time.Duration // the quiet window in-place writes must go without a write; zero turns waiting off
	Caps   Caps          // what the notifier can see
	Events bool          // events come: false for a loop that polls
	Paths  []string      // the files the subject reads, as given: Facts.Paths is in their order
	Inodes Inodes
	// A read that failed for a reason of the process is retried after a
	// backoff from RetryMin to RetryMax, jittered from Seed.
	RetryMin, RetryMax time.Duration
	Seed               uint64
}

// phase is which input the decider awaits: the outcome of the action it
// asked for last, or, idle, any event, the time, or a look (see awaits).
type phase uint8

const (
	idle           phase = iota
	resolving            // a refresh's Resolve: InputResolved
	watchingPath         // a Resolve while the path is watched until it holds still: InputResolved
	resolvingAfter       // a refresh's Resolve, after its read was handed on (readsFirst): InputResolved
	reading              // ReadNow: InputRead
	queueing             // TakeQueue after a read: InputQueue
	queueingFirst        // TakeQueue before a read, with the subject's stamp: InputQueue
	adding               // AddWatch: InputAdded
	checking             // CheckPath: InputPathChecked
	addingOwn            // AddOwnWatch: InputOwnWatchAdded
	askingInode          // AskInode: InputInode
)

var phaseNames = [...]string{"idle", "resolving", "watching the path", "resolving after a read", "reading",
	"taking the queue after a read", "taking the queue before a read", "adding a watch", "checking the path",
	"adding an own watch", "asking an inode"}

func (p phase) String() string { return phaseNames[p] }

// readFor is what a read was asked for, and so what follows its judgment.
type readFor uint8

const (
	readForStart   readFor = iota // the read a loop starts with
	readForRefresh                // an event's, a wait's end, a retry's
	readForLook                   // a re-check's, a poll's, Recheck's
	readForFirst                  // an event's, made before the path is resolved again (see readsFirst)
)

// pathWatchThen is what follows once the path holds still.
type pathWatchThen uint8

const (
	thenOpen      pathWatchThen = iota // the loop is open: nothing
	thenLook                           // a look's read, or its wait
	thenAfterAdds                      // the rest of a read's watches (see afterAdds)
)

// Decider makes the decisions of one watch loop: see the package
// documentation. It is not safe for concurrent use: one loop owns it.
type Decider struct {
	cfg Config

	res     Resolution // the path's last resolution
	wait    readWait
	last    lastRead
	writer  awaitedWriter
	openers openers
	pending pending
	watches watchSet
	retry   readRetry

	watchesGone  int // directory watches the kernel dropped, counted to tell whether a read came through one
	filesGone    int // removals of the file itself seen, counted to tell whether a read came before one
	chainTouched int // events on names on the way to the file, counted to tell whether the path may lead elsewhere

	heldBack time.Time // since when reads have been left to later writers; zero if the last was accepted

	phase phase

	// The procedure under way, where it is not idle.
	order       readOrder // the read asked for
	readVia     bool      // it goes through the last resolution
	readAsked   bool      // it asks the kernel of the file's writers
	stampBefore Stamp     // the subject's stamp, taken before the queue taken right before the read; zero if none
	restamped   bool      // that queue told of a change after its stamp, and was taken again with a new one
	readFor     readFor
	readAll     bool        // a refresh's read, after which every watch is added again
	queuedRead  Read        // the read whose queue is taken
	firstRead   fs.FileInfo // the file a read made before the path was resolved again found (readsFirst)
	noFirst     bool        // the next refresh goes in the usual order: the last read made first disagreed with its resolution
	ownThen     bool        // an own watch is being added in the middle of a read's judgment: readDone follows
	lookKind    lookKind
	lookWhy     Reason
	pathWatch   pathWatch
	adds        addProcedure
	refreshWhy  Reason
	refreshFrom readAfter
	refreshRoot bool // the refresh's resolution is from the root
	askedWatch  int  // the watch AskInode asked of

	out Decision
}

// pathWatch is the watching of the path until it holds still: it is
// resolved from the root and what it needs watched is added, again while
// adding found more to watch, up to maxWatchRounds times. A path being
// rebuilt one directory at a time needs one round per level.
type pathWatch struct {
	all   bool // the next round adds every watch again, not only what is missing
	round int
	then  pathWatchThen
	gone  bool            // thenAfterAdds: a watch's path vanished as it was added
	added map[string]bool // thenAfterAdds: the paths the read's adds watched
}

// addProcedure is the adding of watches, one at a time, until one fails
// in a way that stops it.
type addProcedure struct {
	left     []planned
	added    map[string]bool // the paths watched so far
	forRead  bool            // after a read (afterRead), else a round of watching the path
	readAll  bool
	again    bool // what the adds made missing is being added: a refused file's directories
	err      error
	vanished bool
}

// New returns a Decider for one loop.
func New(cfg Config) *Decider {
	return &Decider{
		cfg:     cfg,
		wait:    readWait{window: cfg.Window},
		pending: pending{touched: make(map[string]bool)},
		watches: newWatchSet(cfg.Caps, cfg.Inodes),
		retry:   readRetry{bo: NewBackoff(cfg.RetryMin, cfg.RetryMax, cfg.Seed)},
	}
}

// open begins a loop on events: the path is resolved, and what it depends
// on watched, until it holds still. The loop then reads the file and
// hands the read in (InputStart). A loop that polls watches nothing: its
// path holds still at once.
func (d *Decider) open(now time.Time) {
	d.watchPath(false, thenOpen, now)
}

// start takes the read a loop starts with, made once it was open: its
// baseline, as where no watch told of writers if the watch was down before
// it (a restart).
func (d *Decider) start(r Read, now time.Time) {
	d.order = readOrder{why: r.Why, after: afterEvent, unwatched: r.Why == ReasonRestart}
	d.readVia, d.readFor, d.readAsked, d.stampBefore = false, readForStart, true, 0
	d.judgeReadNow(r, now)
}

// events takes events the loop found queued when it woke, in order, their
// names clean, all of which happened before the facts gathered for them
// (Needs says what each needs), up to the first that asks for
// something to be done (a read, a watch): Decision.Taken says how many it
// took. The loop hands the rest in once that is done, with facts gathered
// again, so that each is judged as if taken alone, after what came before
// it was done (a writer's close after a file's creation, say, is judged
// after the creation's read). Events that ask for nothing (a kubelet
// update's old payload going, one event after another) cost one gathering
// of facts between them.
func (d *Decider) events(evs []Event, f Facts, now time.Time) {
	n := 0
	for n < len(evs) {
		d.takeEvent(evs[n], &f, now)
		n++
		if d.pending.reread || d.pending.readNow || d.wantsOwnWatch() != "" || len(d.pending.drop) > 0 {
			break
		}
	}
	d.out.Taken = n
	d.judgedEvents()
	d.next(now)
}

// timer takes the time, at or after the last Decision's WakeAt: a read
// retried is due, or a wait is over.
func (d *Decider) timer(now time.Time) {
	switch {
	case !d.retry.at.IsZero() && !now.Before(d.retry.at):
		o := d.retry.fired()
		d.pending.unwatched = o.unwatched
		d.refresh(o.why, o.after, now)
	case !d.wait.deadline.IsZero() && !now.Before(d.wait.deadline):
		why, t := d.wait.fired(now)
		d.refresh(why, t, now)
	default:
		d.next(now)
	}
}

// look looks at the subject, whose stat is st now: the periodic re-check,
// a poll, or Recheck's look now (force).
func (d *Decider) look(why Reason, force bool, st Signature, now time.Time) {
	k := d.last.look(force, st, d.wait.window)
	if k == lookNothing {
		d.out.Unchanged = true
		d.next(now)
		return
	}
	d.lookKind, d.lookWhy = k, why
	if d.cfg.Events {
		d.watchPath(true, thenLook, now)
	} else {
		d.lookRead(now)
	}
}

// resolved takes the resolution the last Resolve asked for, in the phase
// that asked for it: a refresh's (then read, or not, as the wait allows),
// a refresh's after its read was handed on (readsFirst: then watch what it
// needs), or a round of watching the path until it holds still (then add
// what it needs and is not watched). unheard says that a file it led to
// was not wanted before it: events on it went to no one until then, a
// writer's among them. file is what the path leads to now, if Resolve
// asked for its stat (StatFile).
func (d *Decider) resolved(p phase, r Resolution, unheard bool, file fs.FileInfo, now time.Time) {
	switch p {
	case resolving:
		d.res = r
		d.pending.resolved(d.refreshRoot)
		o, ok := d.refreshing(d.refreshWhy, d.refreshFrom, unheard, file)
		if ok {
			d.read(o, readForRefresh, now)
		} else {
			d.wait.refreshDone()
			d.afterRead(d.readAll, now)
		}
	case resolvingAfter:
		d.resolvedAfterRead(r, now)
	case watchingPath:
		d.res = r
		d.pending.resolved(true)
		// A file's own watch of the file renamed over is not added again
		// here, before that file is read (see watchSet.ofAnother): no
		// check of the path follows these adds, and a write between the
		// read and the Add would go unheard.
		d.adds = addProcedure{left: d.watches.missing(&d.res, nil, d.pathWatch.all)}
		d.pathWatch.all = false
		d.pathWatch.round++
		d.addNext(now)
	}
}

// Queue is the events the kernel queued by the time of a read, and those
// that came while they were taken, each lot with facts gathered once it
// was taken: the outcome of TakeQueue. Stamp is the subject's stamp, taken
// before the queue, where TakeQueue asked for it first.
type Queue struct {
	Queued      []Event
	QueuedFacts Facts
	Late        []Event
	LateFacts   Facts
	Stamp       Stamp
}

// queue takes the events TakeQueue asked for, in the phase that asked:
// right before a read (queueingFirst: then read, unless they tell of a
// writer at work), or after one (then judge the read with them). None of
// them is to be handed in again.
func (d *Decider) queue(p phase, q Queue, now time.Time) {
	if p == queueingFirst {
		d.queueTaken(&q, now)
		if _, ok := d.wait.mayRead(d.order.why, d.order.after, false); !ok {
			// A writer the queue told of is at work: its close, or the
			// wait's end, reads.
			d.judgedEvents()
			if d.readFor == readForFirst {
				d.readFor = readForRefresh // the refresh goes on in the usual order
				d.resolveForRefresh(d.order.after)
				return
			}
			d.readDone(now)
			return
		}
		if d.changedAfterStamp(&q) {
			// A writer wrote or closed the file, or its attributes
			// changed, between the stamp and the queue (writers back to
			// back): the file's stamp moved with them, and the read's
			// would differ from it whatever came after, which the count
			// would take for a writer it has not heard. The file is
			// stamped and the queue taken again, once; writers still at
			// it then, the read asks the kernel.
			if !d.restamped {
				d.restamped = true
				d.out.Next = Action{Kind: TakeQueue, StampFirst: true}
				d.phase = queueingFirst
				return
			}
			d.askRead(true)
			return
		}
		d.stampBefore = q.Stamp
		d.askRead(false)
		return
	}
	v := d.laterWriter(&d.queuedRead, &q, now)
	if v == readAccepted {
		v = d.closedEmpty(&d.queuedRead, d.order.after, now)
	}
	d.readJudged(&d.queuedRead, v, now)
}

// changedAfterStamp reports whether the queue q, taken right after the
// file was stamped, tells of a change of the file that moves its stamp: a
// write, a writer's close, a change of attributes, on the counted watch
// or under the file's name.
func (d *Decider) changedAfterStamp(q *Queue) bool {
	for _, evs := range [...][]Event{q.Queued, q.Late} {
		for _, ev := range evs {
			if ev.Has(OpWrite|OpClose|OpAttrib) && (ev.Watch != 0 && ev.Watch == d.openers.watch || d.res.isFile(ev.Name)) {
				return true
			}
		}
	}
	return false
}

// added takes what adding the watch the last AddWatch asked for came to.
func (d *Decider) added(res AddResult, now time.Time) {
	pl := d.adds.left[0]
	d.adds.left = d.adds.left[1:]
	stop, err := d.watches.added(&d.res, pl, res)
	switch {
	case stop:
		d.adds.err, d.adds.vanished = err, res.Kind == ErrVanished
		d.adds.left = nil
		if d.adds.vanished && d.watches.watched[pl.path] != 0 && pl.path != d.keptWatch() {
			// Nothing is at the path: the watch it had is of what was
			// there, gone or moved, whether or not an event said so (the
			// fsnotify backend loses a directory's deletion once its parent
			// is watched). Forgotten, so that what comes back is watched.
			d.watches.drop(pl.path)
			d.out.Dropped = append(d.out.Dropped, pl.path)
		}
	case res.Err == nil:
		if d.adds.added == nil {
			d.adds.added = make(map[string]bool)
		}
		d.adds.added[pl.path] = true
	}
	d.addNext(now)
}

// ownWatchAdded takes what adding the awaited file's own watch came to:
// its id, or why it failed; the path's lstat right after (nil if nothing
// is there); and what the kernel said then of the file's writers. A writer
// no longer there let go of the file before its own watch could tell of
// it (a creator's close, which the file's directory does not report): it
// is taken for that close. A writer still there may be that creator in
// the moment Linux counts it past its close: the kernel is asked again
// soon (see readWait.askAgain).
func (d *Decider) ownWatchAdded(res AddResult, after fs.FileInfo, writers Writers, now time.Time) {
	path, file := d.writer.path, d.writer.file
	switch {
	case res.Err != nil:
		d.writer.ownWatchAdded(0)
	case after != nil && after.Mode().IsRegular() && d.cfg.Inodes.SameFile(after, file):
		d.watches.ownAdded(path, res.ID, after)
		d.writer.ownWatchAdded(res.ID)
		switch writers {
		case WritersNone:
			d.act(eventClosed, path, &Facts{}, now)
		case WritersOpen:
			// Most likely its creator, which closed it in the moment
			// before the watch came, still counted: asked again soon.
			d.wait.askAgain(ReasonWrite, now)
			d.writer.counted = true
		case WritersUnknown:
			if !d.watches.closesOf(path) {
				// The kernel did not say (a file the process does not
				// own), and the writer's close, if it came before the
				// watch, was heard by no one: its directory does not
				// report its entries' closes (the path's file was in
				// another directory until now: a kubelet volume's key
				// made a plain file). Read again a writer no event told
				// of's pause later, not at MaxWriterWait.
				d.wait.askAgain(ReasonWrite, now)
			}
		}
	default:
		// The path no longer shows the file: it may have gone before the
		// Add or right after it (the loop was held up between the two,
		// and the file deleted and the path made a link to a new one that
		// may have its inode number). The notifier's word on the watch
		// tells.
		d.watches.ownAdded(path, res.ID, nil)
		d.askedWatch = res.ID
		d.out.Next = Action{Kind: AskInode, Watch: res.ID}
		d.phase = askingInode
		return
	}
	d.ownWatchDone(now)
}

// inodeOf takes the notifier's word on the watch AskInode asked of: which
// inode it is of, or that the kernel dropped it; ok is false if it cannot
// tell. A watch dropped already was of an inode gone for good since the
// Add, most likely the file's (another file would have had to take its
// place and go again in between): it is taken, and its drop, on its way,
// ends the wait.
func (d *Decider) inodeOf(of WatchedInode, ok bool, now time.Time) {
	id := 0
	if ok {
		dev, ino := d.cfg.Inodes.ID(d.writer.file)
		if of.Gone || of.Dev == dev && of.Ino == ino {
			id = d.askedWatch // the file's, gone from the path since
		}
	}
	d.writer.ownWatchAdded(id)
	d.ownWatchDone(now)
}

// pathChecked takes what the last CheckPath found: whether the path moved
// while the read's watches were added, and if not, the subject's stat
// now.
func (d *Decider) pathChecked(moved bool, st Signature, now time.Time) {
	d.pending.watchesAdded(moved, st, d.last.readSig)
	d.finishAfterRead(now)
}

// WatchedDirs lists the directories watched now, sorted: not the files
// watched by themselves.
func (d *Decider) WatchedDirs() []string { return d.watches.dirs(&d.res, d.keptWatch()) }

// unexpected is an input handed in out of turn: the loop's bug.
func (d *Decider) unexpected(k InputKind) {
	panic("decide: input " + k.String() + " while " + d.phase.String())
}

// end finishes the decision for an input.
func (d *Decider) end(time.Time) Decision {
	if d.watches.dirty {
		d.watches.dirty = false
		d.out.DirsChanged = true
	}
	d.out.WakeAt = d.wait.deadline
	if r := d.retry.at; !r.IsZero() && (d.out.WakeAt.IsZero() || r.Before(d.out.WakeAt)) {
		d.out.WakeAt = r
	}
	return d.out
}

// fail ends the loop on err.
func (d *Decider) fail(err error) {
	d.out.Next = Action{Kind: Fail, Err: err}
	d.phase = idle
}
