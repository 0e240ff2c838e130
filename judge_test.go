//go:build unix

package file

import (
	"io/fs"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The judge's decisions, each from a table: the facts it is handed, and
// what it makes of them. No file is read and no clock is read here.

// fakeFile is a stat: a file's identity, size, time and links.
type fakeFile struct {
	ino   uint64
	size  int64
	mtime time.Time
	links uint64
	mode  fs.FileMode // 0: a regular file
}

func (f fakeFile) Name() string       { return "f" }
func (f fakeFile) Size() int64        { return f.size }
func (f fakeFile) Mode() fs.FileMode  { return f.mode }
func (f fakeFile) ModTime() time.Time { return f.mtime }
func (f fakeFile) IsDir() bool        { return f.mode.IsDir() }
func (f fakeFile) Sys() any {
	st := &syscall.Stat_t{Ino: f.ino}
	setTo(&st.Dev, 1)
	setTo(&st.Nlink, max(f.links, 1))
	return st
}

// setTo sets a field of a Stat_t, whose types vary with the platform.
func setTo[T ~int32 | ~uint16 | ~uint32 | ~int64 | ~uint64](p *T, v uint64) { *p = T(v) }

// fakeFacts answers the judge from data.
type fakeFacts struct {
	stats, lstats map[string]fs.FileInfo
	sig           signature
	watches       map[string]int // path → its watch's id
	refusedPaths  map[string]bool
	own           map[string]int // path → the id of its own watch, if added for the file stats says
	swappedAt     time.Time
}

func (f *fakeFacts) stat(p string) fs.FileInfo  { return f.stats[p] }
func (f *fakeFacts) lstat(p string) fs.FileInfo { return f.lstats[p] }
func (f *fakeFacts) subject() signature         { return f.sig }
func (f *fakeFacts) swapped(string) (time.Time, bool) {
	return f.swappedAt, !f.swappedAt.IsZero()
}
func (f *fakeFacts) watched(p string) bool { return f.watches[p] != 0 }
func (f *fakeFacts) refused(p string) bool { return f.refusedPaths[p] }
func (f *fakeFacts) ownWatch(p string, info fs.FileInfo) int {
	if cur := f.stats[p]; cur != nil && sameFile(cur, info) {
		return f.own[p]
	}
	return 0
}

const (
	dir  = "/etc/app"
	path = "/etc/app/config.yaml"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// testJudge is a judge of one file, /etc/app/config.yaml, read once (its
// stat: sig 7, inode 10, 3 bytes), whose directory and own inode are
// watched, with the backend's caps and a window of 100 ms.
func testJudge(c caps) (*judge, *fakeFacts) {
	read := fakeFile{ino: 10, size: 3, mtime: t0.Add(-time.Hour)}
	view := &sight{names: map[string]bool{dir: true, path: true}, dirs: []string{dir}, files: []string{path},
		home: dir, atomic: true, file: read}
	view.one = true
	j := &judge{caps: c, events: true, view: view, paths: []string{path}, doubt: (&fileSubject{}).doubtful,
		wait: readWait{window: 100 * time.Millisecond}, due: due{touched: make(map[string]bool)},
		last: lastRead{sig: 7, readSig: 7, info: read}}
	f := &fakeFacts{stats: map[string]fs.FileInfo{path: read}, lstats: map[string]fs.FileInfo{path: read}, sig: 7,
		watches: map[string]int{dir: 1, path: 2}, own: map[string]int{path: 2}}
	return j, f
}

var linux = caps{closes: true, ancestors: true, files: true}

// What each event is taken for, case by case of classify.
func TestEventKinds(t *testing.T) {
	other := "/etc/app/other.yaml"
	for _, c := range []struct {
		name  string
		caps  caps
		setup func(j *judge, f *fakeFacts)
		ev    event
		want  eventKind
	}{
		{"an entry nothing depends on", linux, nil, event{name: other, op: opCreate}, eventIgnored},
		{"the file written in place", linux, nil, event{name: path, op: opWrite}, eventWrite},
		{"the file's writer closed it, while its writes are awaited", linux,
			func(j *judge, _ *fakeFacts) { j.wait.written(ReasonWrite, true, t0) },
			event{name: path, op: opClose}, eventClosed},
		{"a close with no wait, the stat as read: nothing changed", linux, nil, event{name: path, op: opClose}, eventIgnored},
		{"a close with no wait, the stat changed: look", linux,
			func(_ *judge, f *fakeFacts) { f.sig = 8 }, event{name: path, op: opClose}, eventLook},
		{"created there, where creations are told from renames", linux, nil, event{name: path, op: opCreate | opMade}, eventMade},
		{"renamed in", linux, nil, event{name: path, op: opCreate}, eventMovedIn},
		{"created or renamed in, where they look alike", caps{}, nil, event{name: path, op: opCreate}, eventLook},
		{"removed, and the path no longer shows what was read", linux,
			func(_ *judge, f *fakeFacts) { f.sig = 0 }, event{name: path, op: opRemove}, eventGone},
		{"removed, where arrivals are not told apart: look", caps{}, nil, event{name: path, op: opRemove}, eventLook},
		{"removed, the stat as the read being judged took it: the read saw it", linux,
			func(j *judge, _ *fakeFacts) { j.last.judging = 7 }, event{name: path, op: opRemove}, eventIgnored},
		{"the link count dropped, another file in its place: the first word of a removal", linux,
			func(_ *judge, f *fakeFacts) {
				f.sig = 9
				f.stats[path] = fakeFile{ino: 11, size: 5}
			}, event{name: path, op: opAttrib}, eventGone},
		{"a touch of the file, still there: look", linux,
			func(_ *judge, f *fakeFacts) { f.sig = 9 }, event{name: path, op: opAttrib}, eventLook},
		// The path led through other.yaml before (a link retargeted since).
		{"a write under a name the path led to before, of another file: the stat as read", linux,
			func(j *judge, f *fakeFacts) { j.view.names[other], f.lstats[other] = true, fakeFile{ino: 12} },
			event{name: other, op: opWrite}, eventIgnored},
		{"a write under a name the path led to before, of the same file (a hard link)", linux,
			func(j *judge, f *fakeFacts) { j.view.names[other], f.lstats[other] = true, fakeFile{ino: 10} },
			event{name: other, op: opWrite}, eventWrite},
		{"a directory on the way made again", linux, nil, event{name: dir, op: opCreate}, eventMovedIn},
		{"a set's file rewritten", caps{}, func(j *judge, _ *fakeFacts) { j.view.atomic = false }, event{name: path, op: opWrite}, eventSetChange},
		{"a set's file touched, its stat as read", caps{}, func(j *judge, _ *fakeFacts) { j.view.atomic = false }, event{name: path, op: opAttrib}, eventIgnored},
		{"events lost", linux, nil, event{op: opRescan}, eventLook},
	} {
		t.Run(c.name, func(t *testing.T) {
			j, f := testJudge(c.caps)
			if c.caps.closes && c.name == "a directory on the way made again" {
				j.view.names[dir] = true
			}
			if c.setup != nil {
				c.setup(j, f)
			}
			assert.Equal(t, c.want, j.event(c.ev, f, t0.Add(time.Millisecond)))
		})
	}
}

// What becomes of a read, by how far it is trusted and what it found.
func TestReadVerdicts(t *testing.T) {
	now := t0.Add(time.Second)
	whole := reading{why: ReasonEvent, c: content{data: []byte("v2\n"), mtime: now.Add(-time.Hour), info: fakeFile{ino: 10, size: 3}, sig: 8}}
	lately := whole
	lately.c.mtime = now.Add(-time.Millisecond)
	empty := whole
	empty.c.data, empty.c.info = nil, fakeFile{ino: 10}
	missing := reading{why: ReasonEvent, err: &fs.PathError{Op: "open", Path: path, Err: fs.ErrNotExist}}
	torn := whole
	torn.c.torn = true
	busy := reading{why: ReasonEvent, err: &fs.PathError{Op: "open", Path: path, Err: syscall.EMFILE}}
	for _, c := range []struct {
		name  string
		r     reading
		o     readOrder
		want  verdict
		after waitState
	}{
		{"an event's read of a whole file: believed once no later writer began", whole, readOrder{trust: doubtful}, verdictAsk, waitNone},
		{"an event's read of an empty file: doubted", empty, readOrder{trust: doubtful}, verdictHold, waitDoubt},
		{"an event's read of a missing file: doubted", missing, readOrder{trust: doubtful}, verdictHold, waitDoubt},
		{"a writer's close read whole", whole, readOrder{trust: closedByWriter}, verdictAsk, waitNone},
		{"a writer's close read empty: empty on purpose", empty, readOrder{trust: closedByWriter}, verdictAsk, waitNone},
		{"a read cut short by a truncation: its writer is awaited", torn, readOrder{trust: closedByWriter}, verdictHold, waitClose},
		{"a held-open writer's empty file: awaited until it closes", empty, readOrder{trust: heldOpen}, verdictHold, waitEmptyOpen},
		{"a quiet window's end, the file written within it: the wait resumes", lately, readOrder{trust: quieted}, verdictHold, waitClose},
		{"a read where no watch heard writers, written lately: a writer's pause", lately, readOrder{trust: doubtful, fresh: true}, verdictHold, waitClose},
		{"a read where no watch heard writers, written long ago", whole, readOrder{trust: doubtful, fresh: true}, verdictAsk, waitNone},
		{"the cap's read stands, whatever writers began", lately, readOrder{trust: capped}, verdictBelieve, waitNone},
		{"the cap's read of an empty file is doubted", empty, readOrder{trust: capped}, verdictHold, waitDoubt},
		{"a read that failed for the process: retried", busy, readOrder{trust: doubtful}, verdictRetry, waitNone},
	} {
		t.Run(c.name, func(t *testing.T) {
			j, f := testJudge(linux)
			r, o := c.r, c.o
			o.why = ReasonEvent
			assert.Equal(t, c.want, j.read(&r, &o, nil, f, now))
			assert.Equal(t, c.after, j.wait.state)
		})
	}
}

// The events queued at a read say whether it is believed: not if a later
// writer began, unless writers have held reads back for the cap.
func TestTheQueueAtARead(t *testing.T) {
	now := t0.Add(time.Second)
	r := reading{why: ReasonWrite, c: content{data: []byte("v2\n"), info: fakeFile{ino: 10, size: 3}, sig: 8}}
	for _, c := range []struct {
		name   string
		queued []event
		want   verdict
	}{
		{"nothing queued", nil, verdictBelieve},
		{"the same close told again by the file's own watch", []event{{name: path, op: opClose, watch: 2}}, verdictBelieve},
		{"a later writer's first write", []event{{name: path, op: opWrite}}, verdictHold},
		{"events lost", []event{{op: opRescan}}, verdictHold},
	} {
		t.Run(c.name, func(t *testing.T) {
			j, f := testJudge(linux)
			f.sig = 8 // the file as the read found it
			assert.Equal(t, c.want, j.laterWriter(&r, c.queued, nil, f, f, now, nil))
		})
	}
	t.Run("held back for the cap", func(t *testing.T) {
		j, f := testJudge(linux)
		f.sig = 8
		write := []event{{name: path, op: opWrite}}
		require.Equal(t, verdictHold, j.laterWriter(&r, write, nil, f, f, now, nil))
		assert.Equal(t, verdictBelieve, j.laterWriter(&r, write, nil, f, f, now.Add(maxWaitFactor*j.wait.window), nil),
			"writers that never let up: what is read stands")
	})
}

// A file is created empty where the path leads, and its creator holds it
// open: its close is awaited. The file is then deleted, and the path made
// a link to a new file that the filesystem gave the freed inode number.
// By inode number the new file is the one awaited, and nothing it does
// would end the wait (it was written whole before it was linked in); the
// awaited file's own watch says it is gone, and the wait ends on that:
// whatever name the path shows, and whatever inode number it has.
func TestTheAwaitedFilesOwnWatchWitnessesItsEnd(t *testing.T) {
	for _, c := range []struct {
		name    string
		witness event
	}{
		{"its close", event{name: path, op: opClose, watch: 5}},
		{"its inode gone", event{name: path, op: opRemove | opGone, watch: 5}},
	} {
		t.Run(c.name, func(t *testing.T) {
			j, f := testJudge(linux)
			created := fakeFile{ino: 20}
			f.lstats[path], f.stats[path] = created, created
			f.own = map[string]int{} // its own watch was the old file's
			now := t0.Add(time.Second)
			require.Equal(t, eventMade, j.event(event{name: path, op: opCreate | opMade}, f, now))
			require.Equal(t, waitEmptyOpen, j.wait.state, "its creator's close is awaited")
			require.Equal(t, path, j.awaited(), "the session is asked for the file's own watch")
			j.writer.watched(5)
			require.Empty(t, j.awaited())
			assert.Equal(t, path, j.witnessKept(), "and keeps it while the wait holds")

			// The path is now a link to /srv/new.yaml, given inode 20.
			newFile := fakeFile{ino: 20, size: 9}
			j.view.files, j.view.file = []string{"/srv/new.yaml"}, newFile
			f.lstats[path], f.stats[path], f.sig = fakeFile{ino: 30, mode: fs.ModeSymlink}, newFile, 9
			_, read := j.refreshing(ReasonEvent, doubtful, false, false, f)
			require.False(t, read, "by inode number, the file awaited: no read while it is written")
			require.Equal(t, waitEmptyOpen, j.wait.state)

			j.event(c.witness, f, now.Add(time.Millisecond))
			why, tr, ok := j.due.next()
			require.True(t, ok, "the witness asks for a read")
			o, read := j.refreshing(why, tr, false, false, f)
			assert.True(t, read, "the wait is over: the file the path shows now is read")
			assert.True(t, o.fresh, "as one no watch heard the writers of")
			assert.False(t, j.due.rewatch, "its own watch gone is no directory's: nothing to watch again")
		})
	}
	t.Run("its inode gone, once the path was resolved away from its name", func(t *testing.T) {
		// config.yaml is a link to a.yaml, made again empty and awaited; a
		// look then resolved the path to b.yaml, given a.yaml's inode
		// number, before the kernel's word of a.yaml's end was taken.
		a, b := "/etc/app/a.yaml", "/etc/app/b.yaml"
		j, f := testJudge(linux)
		j.view.names, j.view.files = map[string]bool{dir: true, path: true, a: true}, []string{a}
		created := fakeFile{ino: 20}
		f.lstats[a], f.stats[a], f.stats[path] = created, created, created
		require.Equal(t, eventMade, j.event(event{name: a, op: opCreate | opMade}, f, t0))
		require.Equal(t, a, j.awaited())
		j.writer.watched(5)
		f.watches[a] = 5
		newFile := fakeFile{ino: 20, size: 9}
		j.view.names, j.view.files, j.view.file = map[string]bool{dir: true, path: true, b: true}, []string{b}, newFile
		f.stats[path], f.sig = newFile, 9
		require.False(t, j.view.relevant(a), "a.yaml is no name of the path's now")

		assert.Equal(t, eventLook, j.event(event{name: a, op: opRemove | opGone, watch: 5}, f, t0.Add(time.Millisecond)))
		_, read := j.refreshing(ReasonEvent, doubtful, true, false, f)
		assert.True(t, read, "the wait is over: the file the path shows now is read")
		assert.Equal(t, []string{a}, j.due.drop, "its watch is forgotten")
		assert.False(t, j.due.rewatch, "a file's watch, not a directory's: nothing to watch again")
	})
	t.Run("an event on another file's watch", func(t *testing.T) {
		j, f := testJudge(linux)
		created := fakeFile{ino: 20}
		f.lstats[path], f.stats[path] = created, created
		f.own = map[string]int{}
		j.event(event{name: path, op: opCreate | opMade}, f, t0)
		j.writer.watched(5)
		j.event(event{name: path, op: opRemove | opGone, watch: 2}, f, t0) // the old file's
		assert.Equal(t, waitEmptyOpen, j.wait.state, "the old file's end is not the awaited one's")
		assert.False(t, j.writer.gone)
	})
}

// A wait begun, among the events queued at a read, for a file at a path
// whose watch an earlier one of them said went (the file moved away and
// back, say) does not take that watch as its witness: the session forgets
// it once the events are judged, and no event comes on it after that. The
// session is asked for the file's own watch anew.
func TestAWaitDoesNotTakeAWatchDroppedInItsBatchAsItsWitness(t *testing.T) {
	j, f := testJudge(linux)
	r := reading{why: ReasonEvent, c: content{data: []byte("v1\n"), info: fakeFile{ino: 10, size: 3}, sig: 7}}
	queued := []event{
		{name: path, op: opRemove}, // IN_MOVED_FROM on its directory: its watch goes
		{name: path, op: opCreate}, // IN_MOVED_TO: back
		{name: path, op: opWrite},  // and written in place
	}
	require.Equal(t, verdictHold, j.laterWriter(&r, queued, nil, f, f, t0.Add(time.Second), nil))
	require.Equal(t, []string{path}, j.due.drop, "the session is to forget the path's watch")
	require.True(t, j.wait.blocksReads(), "the write is awaited")
	assert.Empty(t, j.witnessKept(), "not with the watch the session forgets as its witness")
	assert.Equal(t, path, j.awaited(), "the session is asked for the file's own watch anew")
}
