package decide

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// What the count of a file's openers says after the events its own watch
// (watch 2) told since the kernel said no one held the file open for
// writing, event by event.
func TestTheOpenersCount(t *testing.T) {
	on := func(o Op) Event { return Event{Name: path, Op: o, Watch: 2} }
	other := Event{Name: "/etc/app/other.yaml", Op: OpOpen, Watch: 3}
	for _, c := range []struct {
		name   string
		evs    []Event
		want   Writers
		sure   bool
		opened int
	}{
		{"nothing since: no writer", nil, WritersNone, true, 0},
		{"our own read, opened and closed: no writer", []Event{on(OpOpen), on(OpCloseNoWrite)}, WritersNone, true, 0},
		{"a writer wrote and closed: no writer", []Event{on(OpOpen), on(OpWrite), on(OpClose)}, WritersNone, true, 0},
		{"a writer truncated and has not closed: at work", []Event{on(OpOpen), on(OpWrite)}, WritersOpen, true, 1},
		{"someone opened it and wrote nothing yet: a reader, or a writer about to write", []Event{on(OpOpen)}, WritersOpen, false, 1},
		{"two writers, the first closed: the second, which wrote before that close, holds it", []Event{on(OpOpen), on(OpWrite), on(OpOpen), on(OpWrite), on(OpClose)}, WritersOpen, false, 1},
		{"a write after another's close: at work", []Event{on(OpOpen), on(OpOpen), on(OpClose), on(OpWrite)}, WritersOpen, true, 1},
		{"a reader that opened before the count closes uncounted: never below none", []Event{on(OpCloseNoWrite), on(OpCloseNoWrite)}, WritersNone, true, 0},
		{"opens on another watch count for nothing", []Event{other}, WritersNone, true, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			var o openers
			o.start(2, readFile)
			for _, ev := range c.evs {
				o.take(ev)
			}
			w, sure := o.say()
			assert.Equal(t, c.want, w)
			assert.Equal(t, c.sure, sure)
			assert.Equal(t, c.opened, o.open)
		})
	}
}

// An open or a reader's close tells nothing but who holds the file, on any
// watch: it is never judged as an event. A writer's write and close are
// counted, and judged as ever; the watch's end ends the count.
func TestTheOpenersCountTakesOnlyOpensAndReadersCloses(t *testing.T) {
	var o openers
	o.start(2, readFile)
	for _, c := range []struct {
		ev       Event
		consumed bool
	}{
		{Event{Name: path, Op: OpOpen, Watch: 2}, true},
		{Event{Name: path, Op: OpCloseNoWrite, Watch: 2}, true},
		{Event{Name: "/elsewhere", Op: OpOpen, Watch: 9}, true},
		{Event{Name: path, Op: OpWrite, Watch: 2}, false},
		{Event{Name: path, Op: OpClose, Watch: 2}, false},
	} {
		assert.Equal(t, c.consumed, o.take(c.ev), "%v", c.ev.Op)
	}
	assert.True(t, o.known(2, readFile, fakeStats{}))
	assert.False(t, o.known(2, fakeFile{ino: 11}, fakeStats{}), "another file")
	assert.False(t, o.known(3, readFile, fakeStats{}), "another watch")
	o.take(Event{Name: path, Op: OpRemove | OpGone, Watch: 2})
	assert.False(t, o.known(2, readFile, fakeStats{}), "the watch went with its file")
}

// Someone the count has holding the file without writing at one read
// leaves the next to the count; at two in a row, the kernel is asked. Its
// word that a writer holds the file keeps a count that has someone
// holding it (that is the writer) and ends one that has no one.
func TestTheOpenersCountAsksTheKernelOfAnOpenerThatDoesNotWrite(t *testing.T) {
	var o openers
	o.start(2, readFile)
	o.take(Event{Name: path, Op: OpOpen, Watch: 2})
	_, sure := o.say()
	assert.False(t, sure)
	assert.False(t, o.asks(), "a writer about to write writes within the pause")
	_, sure = o.say()
	assert.False(t, sure)
	assert.True(t, o.asks(), "still no write: most likely a reader")
	o.heldOpen()
	assert.True(t, o.known(2, readFile, fakeStats{}), "the kernel's writer is the one counted")
	assert.False(t, o.asks())

	o.take(Event{Name: path, Op: OpCloseNoWrite, Watch: 2})
	o.heldOpen()
	assert.False(t, o.known(2, readFile, fakeStats{}), "a writer the count missed: it is not to be trusted")
}
