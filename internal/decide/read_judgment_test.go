package decide

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// What becomes of a read, by what it comes after and what it found.
func TestReadOutcomes(t *testing.T) {
	now := t0.Add(time.Second)
	file := fakeFile{ino: 10, size: 3, mtime: now.Add(-time.Hour)}
	ok := whole(ReasonEvent, file, 8)
	lately := ok
	lately.ModTime = now.Add(-time.Millisecond)
	empty := whole(ReasonEvent, fakeFile{ino: 10}, 8)
	missing := Read{Why: ReasonEvent, Err: errors.New("open: no such file or directory"), Missing: true}
	torn := ok
	torn.Torn = true
	busy := Read{Why: ReasonEvent, Err: errors.New("open: too many open files"), Process: true}
	for _, c := range []struct {
		name  string
		r     Read
		o     readOrder
		want  outcome
		after waitState
	}{
		{"an event's read of a whole file: accepted once no later writer began", ok, readOrder{after: afterEvent}, readAskQueue, waitNone},
		{"an event's read of an empty file: confirmed first", empty, readOrder{after: afterEvent}, readHeld, waitConfirm},
		{"an event's read of a missing file: confirmed first", missing, readOrder{after: afterEvent}, readHeld, waitConfirm},
		{"a writer's close read whole", ok, readOrder{after: afterClose}, readAskQueue, waitNone},
		{"a writer's close read empty: empty on purpose, if no writer follows", empty, readOrder{after: afterClose}, readAskQueue, waitNone},
		{"a read cut short by a truncation: its writer is awaited", torn, readOrder{after: afterClose}, readHeld, waitClose},
		{"a paused writer's empty file: awaited until it closes", empty, readOrder{after: afterPause}, readHeld, waitEmptyOpen},
		{"a quiet window's end, the file written within it: the wait resumes", lately, readOrder{after: afterQuiet}, readHeld, waitClose},
		{"a read where no watch heard writers, written lately: a writer's pause", lately, readOrder{after: afterEvent, unwatched: true}, readHeld, waitClose},
		{"a read where no watch heard writers, written long ago", ok, readOrder{after: afterEvent, unwatched: true}, readAskQueue, waitNone},
		{"the cap's read stands, whatever writers began", lately, readOrder{after: afterCap}, readAccepted, waitNone},
		{"the cap's read of an empty file is confirmed first", empty, readOrder{after: afterCap}, readHeld, waitConfirm},
		{"a read that failed for the process: retried", busy, readOrder{after: afterEvent}, readRetried, waitNone},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := testDecider(linux)
			r, o := c.r, c.o
			o.why = ReasonEvent
			assert.Equal(t, c.want, d.judgeRead(&r, &o, nil, false, now))
			assert.Equal(t, c.after, d.wait.state)
		})
	}
}

// What becomes of a read the kernel said who writes of, by what it comes
// after and what it found: the wait it starts, and when that ends.
func TestReadOutcomesByTheKernelsWord(t *testing.T) {
	now := t0.Add(time.Second)
	file := fakeFile{ino: 10, size: 3, mtime: now.Add(-time.Hour)}
	ok := whole(ReasonEvent, file, 8)
	empty := whole(ReasonEvent, fakeFile{ino: 10}, 8)
	torn := ok
	torn.Torn = true
	for _, c := range []struct {
		name    string
		r       Read
		w       Writers
		after   readAfter
		before  func(d *Decider) // the decider's state before the read, if not the test decider's
		want    outcome
		state   waitState
		timeout time.Duration // the wait's deadline, from now; 0 for none
	}{
		{"held open, read at an event: its writer's to finish", ok, WritersOpen, afterEvent, nil, readHeld, waitClose, HeldOpenWindow},
		{"held open and empty: its writer's to write", empty, WritersOpen, afterEvent, nil, readHeld, waitEmptyOpen, MaxWriterWait},
		{"held open at a writer's close: most likely the closer, still counted; asked again soon", ok, WritersOpen, afterClose, nil, readHeld, waitClose, UnheardWriterPause},
		{"held open at a writer's close by the count of its openers: another writer, heard; awaited as one", ok, WritersOpen, afterClose, func(d *Decider) { d.readAsked = false }, readHeld, waitClose, HeldOpenWindow},
		{"held open when asked again after a close: another writer holds it, awaited as one heard", ok, WritersOpen, afterPause, countedAtAClose, readHeld, waitClose, HeldOpenWindow},
		{"held open and empty when asked again after a close: its writer's to write", empty, WritersOpen, afterPause, countedAtAClose, readHeld, waitEmptyOpen, MaxWriterWait},
		{"held open when asked again after a close, a write heard since: a heard writer's pause, judged by the file's times", ok, WritersOpen, afterPause, func(d *Decider) { countedAtAClose(d); d.wait.heard = true }, readAskQueue, waitNone, 0},
		{"no writer when asked again after a close: the closer is gone, read as it is", ok, WritersNone, afterPause, countedAtAClose, readAskQueue, waitNone, 0},
		{"held open at a writer's pause: the file's times judge", ok, WritersOpen, afterPause, nil, readAskQueue, waitNone, 0},
		{"held open at the cap: made again a gap later, to fall between writers", ok, WritersOpen, afterCap, nil, readHeld, waitQuiet, CapGap},
		{"held open at the cap's last try: made again a window later, never accepted", ok, WritersOpen, afterCap, atTheCapsLastTry, readHeld, waitQuiet, 100 * time.Millisecond},
		{"no writer, read at an event: accepted once no later writer began", ok, WritersNone, afterEvent, nil, readAskQueue, waitNone, 0},
		{"no writer, empty, at an event: confirmed first", empty, WritersNone, afterEvent, nil, readHeld, waitConfirm, 100 * time.Millisecond},
		{"no writer, empty, at a close: judged with the queue", empty, WritersNone, afterClose, nil, readAskQueue, waitNone, 0},
		{"no writer, cut short as it was read: read again", torn, WritersNone, afterEvent, nil, readHeld, waitNone, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := testDecider(linux)
			d.readAsked = true // the kernel's own answer, asked at the read
			if c.before != nil {
				c.before(d)
			}
			r := withWriters(c.r, c.w)
			o := readOrder{why: ReasonEvent, after: c.after}
			assert.Equal(t, c.want, d.judgeRead(&r, &o, nil, false, now))
			assert.Equal(t, c.state, d.wait.state)
			if c.timeout == 0 {
				assert.True(t, d.wait.deadline.IsZero(), "no wait: %v", d.wait.deadline)
				return
			}
			assert.Equal(t, c.timeout, d.wait.deadline.Sub(now))
		})
	}
}

// countedAtAClose is a decider whose read at a writer's close found a
// writer still counted.
func countedAtAClose(d *Decider) { d.writer.counted = true }

// atTheCapsLastTry is a decider whose cap's reads all fell inside a
// writer.
func atTheCapsLastTry(d *Decider) { d.wait.capRetried = capRetries }

// The events queued at a read say whether it is accepted: not if a later
// writer began, unless writers have held reads back for the cap.
func TestTheQueueAtARead(t *testing.T) {
	now := t0.Add(time.Second)
	r := whole(ReasonWrite, fakeFile{ino: 10, size: 3}, 8)
	asRead := facts(fakeFile{ino: 10, size: 3}, 8)
	for _, c := range []struct {
		name   string
		queued []Event
		want   outcome
	}{
		{"nothing queued", nil, readAccepted},
		{"the same close told again by the file's own watch", []Event{{Name: path, Op: OpClose, Watch: 2}}, readAccepted},
		{"a later writer's first write", []Event{{Name: path, Op: OpWrite}}, readHeld},
		{"events lost", []Event{{Op: OpRescan}}, readHeld},
		{"a directory on the way touched: read again, from a new resolution", []Event{{Name: dir, Op: OpAttrib}}, readHeld},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := testDecider(linux)
			d.res.Names[dir] = true
			q := Queue{Queued: c.queued, QueuedFacts: asRead, LateFacts: asRead}
			assert.Equal(t, c.want, d.laterWriter(&r, &q, now))
		})
	}
	t.Run("held back for the cap", func(t *testing.T) {
		d := testDecider(linux)
		q := Queue{Queued: []Event{{Name: path, Op: OpWrite}}, QueuedFacts: asRead, LateFacts: asRead}
		require.Equal(t, readHeld, d.laterWriter(&r, &q, now))
		assert.Equal(t, readAccepted, d.laterWriter(&r, &q, now.Add(MaxWaitFactor*d.wait.window)),
			"writers that never let up: what is read stands")
	})
	t.Run("a rename's file chmod'ed, and a late event that needed no stat: the file is taken to be there", func(t *testing.T) {
		d := testDecider(linux)
		renamed := fakeFile{ino: 11, size: 4}
		r := whole(ReasonEvent, renamed, 21)
		d.res.File = renamed
		q := Queue{Queued: []Event{{Name: path, Op: OpAttrib}}, QueuedFacts: facts(renamed, 22),
			Late: []Event{{Name: "/etc/app/unrelated.tmp", Op: OpCreate}}}
		assert.Equal(t, readAccepted, d.laterWriter(&r, &q, now))
	})
	t.Run("the file read removed since", func(t *testing.T) {
		d := testDecider(linux)
		gone := facts(nil, 0)
		q := Queue{Queued: []Event{{Name: path, Op: OpRemove}}, QueuedFacts: gone, LateFacts: gone}
		assert.Equal(t, readHeld, d.laterWriter(&r, &q, now), "its removal's confirmation reads again")
	})
}

// A writer's close that leaves the file empty, no later writer known, was
// most often emptying it to write it again: the empty file is confirmed
// for a held-open window first.
func TestAnEmptyFileAtAWritersCloseIsConfirmed(t *testing.T) {
	d := testDecider(linux)
	empty := whole(ReasonWrite, fakeFile{ino: 10}, 8)
	assert.Equal(t, readHeld, d.closedEmpty(&empty, afterClose, t0))
	assert.Equal(t, waitConfirm, d.wait.state)
	assert.Equal(t, t0.Add(HeldOpenWindow), d.wait.deadline)
	full := whole(ReasonWrite, fakeFile{ino: 10, size: 3}, 8)
	assert.Equal(t, readAccepted, testDecider(linux).closedEmpty(&full, afterClose, t0))
}

// What a look does, by the subject's stat against the last read's.
func TestLooks(t *testing.T) {
	window := 100 * time.Millisecond
	for _, c := range []struct {
		name       string
		withinTick bool // the last read was of a file written within statTick
		force      bool
		st         Signature
		want       lookKind
	}{
		{"unchanged: nothing", false, false, 7, lookNothing},
		{"unchanged, forced: read, and confirm an empty file", false, true, 7, lookRead},
		{"unchanged after a withinTick read: read, for a write in the same tick keeps the stat", true, false, 7, lookRead},
		{"changed with no event: give a writer a window", false, false, 8, lookStatChanged},
		{"nothing there: read now", false, false, 0, lookReadNow},
	} {
		l := lastRead{sig: 7, withinTick: c.withinTick}
		assert.Equal(t, c.want, l.look(c.force, c.st, window), c.name)
	}
	l := lastRead{sig: 7}
	assert.Equal(t, lookReadNow, l.look(false, 8, 0), "no window: read now")
}

// A read is withinTick while the file it read was written less than statTick
// before: then, and only then, the stat does not show a same-size write
// made after it.
func TestARacyReadIsOneOfAFileWrittenWithinATick(t *testing.T) {
	for _, c := range []struct {
		name string
		age  time.Duration
		want bool
	}{
		{"written as it was read", 0, true},
		{"written just under a tick before", statTick - time.Nanosecond, true},
		{"written a tick before", statTick, false},
		{"stamped just under a tick ahead", -statTick + time.Nanosecond, true},
		{"stamped a tick ahead, which its next write changes", -statTick, false},
	} {
		d := testDecider(linux)
		d.accept(&Read{Info: readFile, Sig: 7, ModTime: t0}, t0.Add(c.age))
		assert.Equal(t, c.want, d.last.withinTick, c.name)
	}
}
