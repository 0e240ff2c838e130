package decide

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// The delays double from the first step to the cap, each between half of
// its step and all of it; a healthy run starts them again from the first.
func TestBackoffSteps(t *testing.T) {
	b := NewBackoff(25*time.Millisecond, 3*time.Second, 1)
	ms := time.Millisecond
	steps := []time.Duration{25 * ms, 50 * ms, 100 * ms, 200 * ms, 400 * ms, 800 * ms, 1600 * ms, 3000 * ms, 3000 * ms}
	for i, step := range steps {
		d := b.Next(0)
		assert.True(t, d >= step/2 && d <= step, "delay %d: %s, not within [%s, %s]", i, d, step/2, step)
	}
	d := b.Next(3 * time.Second)
	assert.True(t, d >= 12500*time.Microsecond && d <= 25*ms, "after a healthy run, the first step again: %s", d)
	assert.Equal(t, NewBackoff(25*ms, 3*time.Second, 7).Next(0), NewBackoff(25*ms, 3*time.Second, 7).Next(0), "the same seed, the same delays")
}
