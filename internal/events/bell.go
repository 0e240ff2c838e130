package events

import (
	"os"
	"time"
)

// Bell wakes a watch loop that waits for its notifier's events, its
// timers and its requests in one place: the runtime's poller, on a
// descriptor the bell's ringers write to (an eventfd on Linux), with a
// deadline for the loop's next timer.
//
// Why not the loop's channels, as elsewhere: a value sent on a channel to
// a goroutine that waits on it makes the goroutine runnable, and the
// runtime then wakes the thread of an idle processor to run it, a futex
// wake that reaches an idle CPU; on a virtual machine that costs some
// 12 µs, on the way from the event to the callback (docs/benchmarks.md).
// A goroutine that waits in the poller is found by the thread that rings,
// once it parks again: the inotify reader hands its batch on, goes back
// to the poller, and its thread picks the loop up there, waking no other.
//
// A nil *Bell rings nothing. Ring is safe from any goroutine, and after
// the bell is closed.
type Bell struct {
	f   *os.File
	buf [8]byte // what Wait reads into: the waiter's alone, and no allocation a wait
}

// Ring wakes the bell's waiter, or the next Wait if none waits now: rings
// before a Wait coalesce into one wake.
func (b *Bell) Ring() {
	if b != nil {
		b.ring()
	}
}

// Wait blocks until the bell rings, or until deadline if it is not zero,
// and takes the rings so far. It is for one goroutine, the loop's.
func (b *Bell) Wait(deadline time.Time) {
	_ = b.f.SetReadDeadline(deadline)
	b.wait()
}

// Close releases the bell's descriptor. Rings after it do nothing.
func (b *Bell) Close() {
	if b != nil {
		_ = b.f.Close()
	}
}
