package file

import (
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/keepwatch/file/internal/decide"
	"github.com/keepwatch/file/internal/osfile"
)

// traceKept is how many of the decider's last steps traced keeps.
const traceKept = 2000

// tracedStep is one step of a decider: what it was told and decided, its
// slices copied (the loop's and the decider's are reused), to be put in
// words only if the test fails.
type tracedStep struct {
	in decide.Input
	d  decide.Decision
}

// traced records each step of the loop's decider, and logs the last
// traceKept of them if the test fails: what the decider was told, and what
// it decided, for a fault too rare to catch otherwise (watched and the
// convergence tests trace every watch).
func traced(t testing.TB) Option {
	var mu sync.Mutex
	var steps []tracedStep
	start := time.Now()
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		steps = steps[max(0, len(steps)-traceKept):]
		lines := make([]string, len(steps))
		for i, s := range steps {
			ms := float64(s.in.Now.Sub(start).Microseconds()) / 1000
			lines[i] = fmt.Sprintf("%9.3fms %s -> %s", ms, inputLine(s.in), decisionLine(s.d, s.in.Now))
		}
		t.Logf("the decider's last %d steps:\n%s", len(lines), strings.Join(lines, "\n"))
	})
	return onStep(func(in decide.Input, d decide.Decision) {
		s := tracedStep{in: cloneInput(in), d: d}
		s.d.Dropped, s.d.Remove = slices.Clone(d.Dropped), slices.Clone(d.Remove)
		s.d.Next.Touched = nil
		mu.Lock()
		steps = append(steps, s)
		if len(steps) >= 2*traceKept {
			steps = append(steps[:0], steps[len(steps)-traceKept:]...)
		}
		mu.Unlock()
	})
}

// onStep has the loop call f after each step of its decider, on the loop's
// goroutine, before the decision is carried out: to trace the steps, or
// to change the files at a chosen step, making a rare order certain. The
// hooks given run in their order.
func onStep(f func(decide.Input, decide.Decision)) Option {
	return func(o *options) {
		before := o.trace
		o.trace = func(in decide.Input, d decide.Decision) {
			if before != nil {
				before(in, d)
			}
			f(in, d)
		}
	}
}

// cloneInput copies what a trace shows of in that the loop may reuse.
func cloneInput(in decide.Input) decide.Input {
	in.Events = slices.Clone(in.Events)
	in.Facts = cloneFacts(in.Facts)
	in.Queue.Queued, in.Queue.Late = slices.Clone(in.Queue.Queued), slices.Clone(in.Queue.Late)
	in.Queue.QueuedFacts, in.Queue.LateFacts = decide.Facts{}, decide.Facts{}
	r := in.Resolution
	in.Resolution = decide.Resolution{Home: r.Home, DataLink: r.DataLink, One: r.One, File: r.File, Files: slices.Clone(r.Files)}
	return in
}

func cloneFacts(f decide.Facts) decide.Facts {
	return decide.Facts{Paths: slices.Clone(f.Paths), Subject: f.Subject, Entries: slices.Clone(f.Entries)}
}

func inputLine(in decide.Input) string {
	s := in.Kind.String()
	switch in.Kind {
	case decide.InputEvents:
		s += " " + eventsLine(in.Events) + " facts " + factsLine(in.Facts)
	case decide.InputStart, decide.InputRead:
		r := in.Read
		s += fmt.Sprintf(" %v err=%v missing=%v empty=%v size=%d torn=%v info=%s writers=%v fine=%v", r.Why, r.Err, r.Missing, r.Empty, r.Size, r.Torn, infoLine(r.Info), r.Writers, r.FineTimes)
	case decide.InputLook:
		s += fmt.Sprintf(" %v force=%v", in.Why, in.Force)
	case decide.InputResolved:
		r := in.Resolution
		s += fmt.Sprintf(" home=%s files=%v data=%q resolved=%s unheard=%v file=%s", r.Home, r.Files, r.DataLink, infoLine(r.File), in.Unheard, infoLine(in.File))
	case decide.InputQueue:
		s += " queued " + eventsLine(in.Queue.Queued) + " late " + eventsLine(in.Queue.Late)
	case decide.InputAdded:
		s += fmt.Sprintf(" %+v", in.Add)
	case decide.InputOwnWatchAdded:
		s += fmt.Sprintf(" %+v file=%s writers=%v", in.Add, infoLine(in.File), in.Writers)
	case decide.InputInode:
		s += fmt.Sprintf(" %+v known=%v", in.Inode, in.Known)
	case decide.InputPathChecked:
		s += fmt.Sprintf(" moved=%v", in.Moved)
	}
	return s
}

func eventsLine(evs []decide.Event) string {
	parts := make([]string, len(evs))
	for i, e := range evs {
		parts[i] = fmt.Sprintf("%s:%v@%d", e.Name, e.Op, e.Watch)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func factsLine(f decide.Facts) string {
	parts := make([]string, 0, len(f.Paths)+len(f.Entries))
	for _, p := range f.Paths {
		parts = append(parts, "path="+infoLine(p))
	}
	for _, e := range f.Entries {
		parts = append(parts, e.Name+"="+infoLine(e.Info))
	}
	return "{" + strings.Join(parts, " ") + "}"
}

func infoLine(fi fs.FileInfo) string {
	if fi == nil {
		return "none"
	}
	_, ino := osfile.ID(fi)
	return fmt.Sprintf("ino%d/%dB/%s", ino, fi.Size(), fi.Mode().Type())
}

func decisionLine(d decide.Decision, now time.Time) string {
	var parts []string
	switch d.Forward {
	case decide.ForwardRead:
		parts = append(parts, "forward read")
	case decide.ForwardFailure:
		parts = append(parts, "forward failure")
	}
	if len(d.Dropped) > 0 {
		parts = append(parts, "dropped "+strings.Join(d.Dropped, ","))
	}
	if len(d.Remove) > 0 {
		parts = append(parts, "remove "+strings.Join(d.Remove, ","))
	}
	a := d.Next
	act := a.Kind.String()
	switch a.Kind {
	case decide.Resolve:
		act += fmt.Sprintf(" root=%v stat=%v", a.FromRoot, a.StatFile)
	case decide.ReadNow:
		act += fmt.Sprintf(" %v via=%v ask=%v first=%v", a.Why, a.Via, a.Ask, a.First)
	case decide.TakeQueue:
		act += fmt.Sprintf(" truncation=%v stamp=%v", a.AwaitTruncation, a.StampFirst)
	case decide.AddWatch, decide.AddOwnWatch:
		act += fmt.Sprintf(" %s %v file=%s", a.Path, a.Report, infoLine(a.File))
	case decide.AskInode:
		act += fmt.Sprintf(" %d", a.Watch)
	case decide.Fail:
		act += fmt.Sprintf(" %v", a.Err)
	}
	parts = append(parts, act)
	if !d.WakeAt.IsZero() {
		parts = append(parts, "wake +"+d.WakeAt.Sub(now).String())
	}
	if d.Taken > 0 {
		parts = append(parts, fmt.Sprintf("taken %d", d.Taken))
	}
	return strings.Join(parts, "; ")
}
