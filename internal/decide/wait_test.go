package decide

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The wait before a read, transition by transition: every state it can be
// in (a wait for a writer's close two ways: heard writing, or not), and
// every input it can take, with the state it goes to and when it ends
// then. The window is 100 ms; each state was begun at t0 (a write heard, a
// confirmation, a stat change...), and the input comes 10 ms later, at t1.
// A deadline is given from t1; "-" is none. A wait in none has never
// begun: a resume there (which follows a wait's end, and keeps its start)
// finds the cap long passed.
//
// This is the table docs/internals.md shows.
var waitTable = []struct {
	from waitRow
	to   [len(waitInputs)]string
}{
	{rowNone, [...]string{"quiet +100ms", "close +1s", "quiet +0s", "close +0s", "empty-open +100ms", "empty-open +10s", "stat-changed +100ms", "none -", "none -", "none -", "none -", "confirm +100ms", "none -", "none -", "close +25ms", "confirm +1s", "quiet +5ms", "close +25ms"}},
	{rowConfirm, [...]string{"quiet +100ms", "close +1s", "quiet +100ms", "close +25ms", "empty-open +100ms", "empty-open +10s", "stat-changed +100ms", "confirm +90ms", "confirm +90ms", "confirm +90ms", "confirm +90ms", "confirm +90ms", "none -", "none -", "close +25ms", "confirm +1s", "quiet +5ms", "close +25ms"}},
	{rowQuiet, [...]string{"quiet +100ms", "close +1s", "quiet +100ms", "close +25ms", "empty-open +100ms", "empty-open +10s", "quiet +90ms", "quiet +90ms", "none -", "quiet +90ms", "none -", "quiet +90ms", "quiet +90ms", "none -", "close +25ms", "quiet +90ms", "quiet +5ms", "close +25ms"}},
	{rowStatChanged, [...]string{"quiet +100ms", "close +1s", "quiet +100ms", "close +25ms", "empty-open +100ms", "empty-open +10s", "stat-changed +90ms", "none -", "none -", "stat-changed +90ms", "none -", "stat-changed +90ms", "stat-changed +90ms", "none -", "close +25ms", "stat-changed +90ms", "stat-changed +5ms", "close +25ms"}},
	{rowClose, [...]string{"close +1s", "close +1s", "quiet +1s", "close +1s", "empty-open +100ms", "empty-open +10s", "close +990ms", "close +990ms", "none -", "quiet +1s", "none -", "close +990ms", "close +990ms", "none -", "close +1s", "close +990ms", "close +5ms", "close +25ms"}},
	{rowCloseUnheard, [...]string{"close +25ms", "close +1s", "quiet +100ms", "close +25ms", "empty-open +100ms", "empty-open +10s", "close +15ms", "close +15ms", "none -", "quiet +100ms", "none -", "close +15ms", "close +15ms", "none -", "close +25ms", "close +15ms", "close +5ms", "close +25ms"}},
	{rowEmptyOpen, [...]string{"quiet +100ms", "close +1s", "quiet +100ms", "close +25ms", "empty-open +100ms", "empty-open +10s", "empty-open +9.99s", "empty-open +9.99s", "none -", "quiet +100ms", "none -", "empty-open +9.99s", "empty-open +9.99s", "none -", "close +25ms", "empty-open +9.99s", "quiet +5ms", "close +25ms"}},
}

// waitInputs is everything a wait can take, in the table's order.
var waitInputs = [...]struct {
	name string
	take func(w *readWait, now time.Time)
}{
	{"written", func(w *readWait, now time.Time) { w.written(ReasonWrite, false, now) }},
	{"written,closes", func(w *readWait, now time.Time) { w.written(ReasonWrite, true, now) }},
	{"resume", func(w *readWait, now time.Time) { w.resume(false, now) }},
	{"resume,closes", func(w *readWait, now time.Time) { w.resume(true, now) }},
	{"emptyWhileOpen", func(w *readWait, now time.Time) { w.emptyWhileOpen(ReasonWrite, false, now) }},
	{"emptyWhileOpen,closes", func(w *readWait, now time.Time) { w.emptyWhileOpen(ReasonWrite, true, now) }},
	{"statChanged", func(w *readWait, now time.Time) { w.statChanged(ReasonRecheck, now) }},
	{"swapSeen", func(w *readWait, _ time.Time) { w.swapSeen() }},
	{"moved", func(w *readWait, _ time.Time) { w.moved() }},
	{"closeLost", func(w *readWait, now time.Time) { w.closeLost(now) }},
	{"writerClosed", func(w *readWait, _ time.Time) { w.writerClosed() }},
	{"confirm", func(w *readWait, now time.Time) { w.confirm(ReasonEvent, now) }},
	{"accepted", func(w *readWait, _ time.Time) { w.accepted() }},
	{"fired", func(w *readWait, now time.Time) { w.fired(now) }},
	{"unheardWriter", func(w *readWait, now time.Time) { w.unheardWriter(ReasonEvent, now) }},
	{"emptyClosed", func(w *readWait, now time.Time) { w.emptyClosed(ReasonWrite, now) }},
	{"retryAtCap", func(w *readWait, now time.Time) { w.retryAtCap(now) }},
	{"askAgain", func(w *readWait, now time.Time) { w.askAgain(ReasonWrite, now) }},
}

// waitRow is a state of the table, and how it was begun: a wait for a
// writer's close, heard writing or not, waits for pauses of its own.
type waitRow uint8

const (
	rowNone waitRow = iota
	rowConfirm
	rowQuiet
	rowStatChanged
	rowClose        // a writer heard writing
	rowCloseUnheard // a writer no event told of
	rowEmptyOpen
)

var waitRowNames = [...]string{"none", "confirm", "quiet", "stat-changed", "close (heard)", "close (unheard)", "empty-open"}

func (r waitRow) String() string { return waitRowNames[r] }

// waitIn returns a wait in the row's state, begun at t0.
func waitIn(r waitRow, t0 time.Time) *readWait {
	w := &readWait{window: 100 * time.Millisecond}
	want := map[waitRow]waitState{rowNone: waitNone, rowConfirm: waitConfirm, rowQuiet: waitQuiet, rowStatChanged: waitStatChanged,
		rowClose: waitClose, rowCloseUnheard: waitClose, rowEmptyOpen: waitEmptyOpen}[r]
	switch r {
	case rowConfirm:
		w.confirm(ReasonEvent, t0)
	case rowQuiet:
		w.written(ReasonWrite, false, t0)
	case rowStatChanged:
		w.statChanged(ReasonRecheck, t0)
	case rowClose:
		w.written(ReasonWrite, true, t0)
	case rowCloseUnheard:
		w.unheardWriter(ReasonEvent, t0)
	case rowEmptyOpen:
		w.emptyWhileOpen(ReasonWrite, true, t0)
	}
	if w.state != want {
		panic(fmt.Sprintf("set-up of %s gave %s", r, w.state))
	}
	return w
}

// after describes w's state and deadline, from t.
func (w *readWait) after(t time.Time) string {
	if w.deadline.IsZero() {
		return w.state.String() + " -"
	}
	return fmt.Sprintf("%s +%s", w.state, w.deadline.Sub(t))
}

func TestEveryWaitTransition(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	t1 := t0.Add(10 * time.Millisecond)
	var got strings.Builder
	for _, row := range waitTable {
		for i, in := range waitInputs {
			w := waitIn(row.from, t0)
			in.take(w, t1)
			assert.Equal(t, row.to[i], w.after(t1), "%s, then %s", row.from, in.name)
			fmt.Fprintf(&got, "%q, ", w.after(t1))
		}
		got.WriteString("\n")
	}
	if t.Failed() {
		t.Logf("the table as it is:\n%s", got.String())
	}
}

// docs/internals.md shows the table above as it is.
func TestTheInternalsDocShowsTheWaitTable(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "internals.md"))
	require.NoError(t, err)
	names := map[waitRow]string{rowClose: "close (writer heard)", rowCloseUnheard: "close (writer unheard)"}
	for _, row := range waitTable {
		name := names[row.from]
		if name == "" {
			name = row.from.String()
		}
		cells := make([]string, len(row.to))
		for i, c := range row.to {
			cells[i] = strings.TrimSuffix(c, " -")
		}
		line := "| " + name + " | " + strings.Join(cells, " | ") + " |"
		assert.True(t, strings.Contains(string(doc), line+"\n"), "docs/internals.md lacks the row for %s:\n%s", name, line)
	}
}

// A read at the cap made again, for a writer no event told of, fires as
// the cap's again by that wait's own cap (ten times its 25 ms pause), not
// as a quiet wait's end, whose cap is ten windows: the retry keeps the
// kind of wait it goes on from.
func TestTheCapsRetryKeepsItsWait(t *testing.T) {
	w := readWait{window: 100 * time.Millisecond}
	w.unheardWriter(ReasonEvent, t0)
	at := t0.Add(MaxWaitFactor * UnheardWriterPause)
	_, after := w.fired(at)
	require.Equal(t, afterCap, after)
	w.retryAtCap(at)
	_, after = w.fired(at.Add(CapGap))
	assert.Equal(t, afterCap, after, "a retry of the cap's read is the cap's read")
	for range capRetries {
		w.retryAtCap(at)
	}
	assert.Equal(t, at.Add(w.window), w.deadline, "past the tries, a window apart")
}
