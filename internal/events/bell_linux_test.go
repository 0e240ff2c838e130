package events

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/keepwatch/file/internal/decide"
)

// waitReturns reports whether b.Wait(deadline) returned before limit,
// which is far later than any ring's wake.
func waitReturns(b *Bell, deadline time.Time, limit time.Duration) bool {
	done := make(chan struct{})
	go func() {
		defer close(done)
		b.Wait(deadline)
	}()
	select {
	case <-done:
		return true
	case <-time.After(limit):
		b.Ring() // let the goroutine go
		<-done
		return false
	}
}

// A ring wakes the wait, whether it came before the wait or during it;
// rings before a wait are one wake; without a ring, the deadline ends it;
// rings after the bell is closed do nothing.
func TestABellWakesItsWaiter(t *testing.T) {
	b := NewBell()
	require.NotNil(t, b)
	b.Ring()
	b.Ring()
	assert.True(t, waitReturns(b, time.Time{}, 5*time.Second), "a ring before the wait")
	assert.False(t, waitReturns(b, time.Time{}, 100*time.Millisecond), "two rings before were one wake")

	start := time.Now()
	b.Wait(start.Add(50 * time.Millisecond))
	assert.GreaterOrEqual(t, time.Since(start), 50*time.Millisecond, "no ring: the deadline")

	go func() {
		time.Sleep(20 * time.Millisecond)
		b.Ring()
	}()
	assert.True(t, waitReturns(b, time.Time{}, 5*time.Second), "a ring during the wait")

	b.Close()
	b.Ring()
	var none *Bell
	none.Ring()
	none.Close()
}

// A subscription of a hub on the kernel's inotify has a bell, which rings
// once the events a batch queued for it are in its channel; a hub on a
// test's backend gives none. No more than MaxBells subscriptions have one
// at once.
func TestAHubOnTheKernelRingsItsSubscriptionsBells(t *testing.T) {
	h := NewHub(newDefaultBackend)
	n, err := h.Subscribe()
	require.NoError(t, err)
	defer n.Close()
	bell := n.(Belled).Bell()
	require.NotNil(t, bell)

	dir := t.TempDir()
	path := filepath.Join(dir, "config.yaml")
	n.Want(path)
	_, err = n.Add(dir, decide.WatchNames)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, []byte("a: 1\n"), 0o644))
	assert.True(t, waitReturns(bell, time.Time{}, 10*time.Second), "no ring for the event")
	select {
	case ev := <-n.Events():
		assert.Equal(t, path, ev.Name)
	default:
		t.Fatal("the bell rang before the event was in the channel")
	}

	var more []Notifier
	defer func() {
		for _, m := range more {
			m.Close()
		}
	}()
	for range MaxBells + 1 {
		m, err := h.Subscribe()
		require.NoError(t, err)
		more = append(more, m)
	}
	assert.Nil(t, more[len(more)-1].(Belled).Bell(), "more than MaxBells")
	more[0].Close()
	m, err := h.Subscribe()
	require.NoError(t, err)
	more[0] = m
	assert.NotNil(t, m.(Belled).Bell(), "a bell given back is given again")

	fake, err := NewHub((&fakeBackends{}).newBackend).Subscribe()
	require.NoError(t, err)
	defer fake.Close()
	assert.Nil(t, fake.(Belled).Bell(), "a test's backend")
}

// A batch reports a loop readied only where it went to a subscription
// without a bell, whose loop waits on its channel: the inotify reader
// yields for that one, and a yield for a loop on a bell would only wake an
// idle processor's thread.
func TestABatchReportsALoopReadiedOnlyForOneWithoutABell(t *testing.T) {
	h := NewHub(newDefaultBackend)
	subs := make([]Notifier, MaxBells+1)
	for i := range subs {
		n, err := h.Subscribe()
		require.NoError(t, err)
		defer n.Close()
		subs[i] = n
	}
	belled, plain := subs[0], subs[MaxBells]
	require.NotNil(t, belled.(Belled).Bell())
	require.Nil(t, plain.(Belled).Bell())

	dir := t.TempDir()
	idOf := func(n Notifier, name string) int {
		n.Want(filepath.Join(dir, name))
		id, err := n.Add(dir, decide.WatchNames)
		require.NoError(t, err)
		return id
	}
	id := idOf(belled, "a.yaml")
	require.Equal(t, id, idOf(plain, "b.yaml"), "one watch of the directory for both")
	batch := func(name string) bool {
		h.mu.Lock()
		in := h.cur
		h.mu.Unlock()
		return h.dispatch(in, []RawEvent{{ID: id, Name: name, Op: decide.OpCreate}})
	}
	assert.False(t, batch("a.yaml"), "a loop on a bell: the poller readies it")
	assert.True(t, waitReturns(belled.(Belled).Bell(), time.Time{}, 10*time.Second), "its bell rang")
	assert.True(t, batch("b.yaml"), "a loop on its channel: readied by the send")
	assert.False(t, batch("other.yaml"), "an event no one wants readies no one")
	<-belled.Events()
	<-plain.Events()
}

// A ring and a wait are on the way from every event to its callback:
// they allocate nothing.
func TestAWaitOnABellAllocatesNothing(t *testing.T) {
	b := NewBell()
	require.NotNil(t, b)
	defer b.Close()
	allocs := testing.AllocsPerRun(100, func() {
		b.Ring()
		b.Wait(time.Time{})
	})
	assert.Zero(t, allocs)
}
