package decide

import (
	"math/rand/v2"
	"time"
)

// Backoff yields the delays before something that failed is tried again:
// growing exponentially from about Min up to Max, and jittered. Half of
// each delay is fixed and half random ("equal jitter"): many watches
// broken by one fault spread their retries, and none retries sooner than
// half its step. The randomness comes from the seed it is made with, so
// that the same seed gives the same delays.
type Backoff struct {
	min, max time.Duration
	rnd      *rand.Rand
	step     int // doublings so far; it stops growing at the cap
}

// NewBackoff returns a Backoff from about lo to hi, jittered from seed.
func NewBackoff(lo, hi time.Duration, seed uint64) *Backoff {
	return &Backoff{min: lo, max: max(hi, lo), rnd: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

// Next returns the delay before the next attempt, given how long the one
// that just failed had run. A run of at least the cap was healthy: its
// failure is a new one, and the delays start again from Min.
func (b *Backoff) Next(ran time.Duration) time.Duration {
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
	half := d / 2
	return half + time.Duration(b.rnd.Int64N(int64(d-half)+1))
}

// Reset starts the delays again from Min.
func (b *Backoff) Reset() { b.step = 0 }
