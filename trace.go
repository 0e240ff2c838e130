package file

import (
	"fmt"
	"strings"
	"time"
)

// traceHook, when not nil, is told of each decision a watch session makes:
// the event it took and what it made of it, each read and what became of
// it, each wait begun. Tests set it to compare what two builds decide for
// the same scenario (the characterisation of the session's decisions);
// nothing else does. Every call site checks it first, so that a build
// without it pays for no formatting.
var traceHook func(path, line string)

// tracef tells traceHook of a decision of the session on path.
func tracef(path, format string, args ...any) {
	traceHook(path, fmt.Sprintf(format, args...))
}

// String names an op's bits, for traces.
func (o op) String() string {
	var names []string
	for _, b := range []struct {
		bit  op
		name string
	}{{opCreate, "create"}, {opRemove, "remove"}, {opWrite, "write"}, {opClose, "close"},
		{opAttrib, "attrib"}, {opRescan, "rescan"}, {opDropped, "dropped"}, {opMade, "made"}, {opGone, "gone"}} {
		if o&b.bit != 0 {
			names = append(names, b.name)
		}
	}
	return strings.Join(names, "|")
}

// summary describes a read for a trace: its size and the start of its sum,
// or its error.
func (r *reading) summary() string {
	if r.err != nil {
		return "err " + r.err.Error()
	}
	return fmt.Sprintf("ok %d %x", r.c.size(), r.c.sum[:4])
}

// epoch is where a synctest bubble's clock starts: traces give times from it.
var epoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// traceEvent traces what the judge made of an event.
func traceEvent(path string, v *sight, ev event, kind eventKind) {
	switch {
	case ev.has(opRescan):
		tracef(path, "event rescan")
	case !v.relevant(ev.name) && kind == eventIgnored:
		tracef(path, "event %s %s: not relevant", ev.name, ev.op)
	default:
		tracef(path, "event %s %s -> %s", ev.name, ev.op, kind)
	}
}

// traceTaken traces the events taken with a read, what each was taken
// for, and the watches the kernel dropped among them (drops).
func traceTaken(path string, v *sight, evs []event, taken []takenEvent, drops []string) {
	dropped := 0
	for i, ev := range evs {
		for _, p := range drops[dropped:taken[i].drops] {
			tracef(path, "watch gone %s", p)
		}
		dropped = taken[i].drops
		traceEvent(path, v, ev, taken[i].kind)
	}
}

// traceLeft traces a read left to a wait under way.
func traceLeft(path string, why Reason, t trust, state waitState) {
	if traceHook != nil {
		tracef(path, "read %s %s: left to the wait (%s)", why, t, state)
	}
}

// traceOffer traces what became of a read, and the wait it left.
func traceOffer(path string, v verdict, w *readWait) {
	if traceHook != nil {
		tracef(path, "offer: %s; wait %s", v, w.describe())
	}
}
