package file

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestBackoffSteps(t *testing.T) {
	top := func(n int64) int64 { return n - 1 }
	b := backoff{min: 25 * time.Millisecond, max: 3 * time.Second, rand: top}
	var got []time.Duration
	for range 10 {
		got = append(got, b.next(0))
	}
	ms := time.Millisecond
	assert.Equal(t, []time.Duration{25 * ms, 50 * ms, 100 * ms, 200 * ms, 400 * ms, 800 * ms, 1600 * ms,
		3000 * ms, 3000 * ms, 3000 * ms}, got)

	b.rand = func(int64) int64 { return 0 }
	assert.Equal(t, 12500*time.Microsecond, b.next(3*time.Second), "after a healthy run, half the first step at least")
	assert.Equal(t, 25*time.Millisecond, b.next(0), "then growing again")
}
