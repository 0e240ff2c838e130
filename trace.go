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
