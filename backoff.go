package file

import (
	"math/rand/v2"
	"time"
)

// backoff yields the delays before a broken watch is re-armed: growing
// exponentially from about min up to max, and jittered. Half of each delay
// is fixed and half random ("equal jitter"): many providers broken by one
// fault spread their retries, and none retries sooner than half its step.
type backoff struct {
	min, max time.Duration
	rand     func(n int64) int64 // rand.Int64N; tests replace it
	step     int                 // doublings so far; it stops growing at the cap
}

// jitter is where backoffs take their randomness: rand.Int64N, but for
// tests that compare what two builds decide, which fix it.
var jitter = rand.Int64N

// next returns the delay before the next attempt, given how long the one
// that just failed had run. A run of at least max was healthy: its failure
// is a new one, and the delays start again from min.
func (b *backoff) next(ran time.Duration) time.Duration {
	if ran >= b.max {
		b.step = 0
	}
	d := b.min
	for i := 0; i < b.step && d < b.max; i++ {
		d *= 2
	}
	d = min(d, b.max)
	if d < b.max {
		b.step++
	}
	rnd := b.rand
	if rnd == nil {
		rnd = jitter
	}
	half := d / 2
	return half + time.Duration(rnd(int64(d-half)+1))
}
