package k8smount_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Events lost: a callback held while thousands of events come, and an
// update among them. The watch's queue in the process is bounded: it loses
// what it could not take, looks again when it can, and delivers the
// update; nothing is delivered twice. (A real overflow of the kernel's
// queue, which the shared instance's reader never lets happen, is the root
// package's TestARealQueueOverflowIsSurvived.)
func TestTheWatchSurvivesLostEvents(t *testing.T) {
	v := newVolume(t, payload(0))
	p := provider(t, v.Dir)
	r := &recorder{p: p}
	held, release := make(chan struct{}), make(chan struct{})
	first := true
	require.NoError(t, p.Watch(func(event any, err error) {
		if first {
			first = false
			close(held)
			<-release
		}
		r.cb(event, err)
	}))
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()

	update(t, v, payload(1))
	<-held
	gen, err := v.Generation()
	require.NoError(t, err)
	for i := range 4000 { // the mount and its payload, turn about: the kernel merges alike events
		target, mode := v.Dir, os.FileMode(0o755|(i/2%2)<<4)
		if i%2 == 1 {
			target = filepath.Join(v.Dir, gen)
		}
		require.NoError(t, os.Chmod(target, mode))
	}
	update(t, v, payload(2))
	close(release)
	r.wait(t, 2)
	gens, errs := r.snapshot()
	assert.Equal(t, []int{1, 2}, gens)
	assert.Empty(t, errs)
}
