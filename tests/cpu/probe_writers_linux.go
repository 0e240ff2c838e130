package main

import (
	"fmt"
	"os"
	"os/signal"
	"slices"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// openStats is what the "opens" child reports of its write-opens.
type openStats struct {
	P50, P99, Max time.Duration
	// FirstCalled and FirstReturned time the first open on the clock
	// processes share (monotonic).
	FirstCalled, FirstReturned int64
}

// loopStats is what the "probeloop" child reports.
type loopStats struct {
	Probes, Refused int
}

// writerDelay times another process's write-opens of the file with and
// without a third probing it in a tight loop: what keepwatch's probes may
// cost the writers of a file it watches, at worst.
func writerDelay(self, path string, opens, reps int) error {
	fmt.Printf("(c) %d write-opens (open O_WRONLY, close) by one process, timed each, with and without another probing the file in a tight loop:\n\n", opens)
	fmt.Printf("| repetition | probe loop | open p50 | open p99 | open max | probes (refused: a writer had it open) |\n| --- | --- | --- | --- | --- | --- |\n")
	for rep := range reps {
		for _, probing := range []bool{rep%2 == 1, rep%2 == 0} {
			stats, loop, err := timeOpens(self, path, opens, probing)
			if err != nil {
				return err
			}
			loopText, probes := "none", "–"
			if probing {
				loopText, probes = "probing", fmt.Sprintf("%d (%d)", loop.Probes, loop.Refused)
			}
			fmt.Printf("| %d | %s | %s | %s | %s | %s |\n", rep+1, loopText, micros(stats.P50), micros(stats.P99), micros(stats.Max), probes)
		}
	}
	fmt.Println()
	return nil
}

func timeOpens(self, path string, opens int, probing bool) (openStats, loopStats, error) {
	var stats openStats
	var loop loopStats
	var prober *child
	if probing {
		var err error
		if prober, err = startChild(self, "probeloop", []string{"-path", path}, nil); err != nil {
			return stats, loop, err
		}
		if err := prober.waitReady(); err != nil {
			return stats, loop, err
		}
	}
	opener, err := startChild(self, "opens", []string{"-path", path, "-n", fmt.Sprint(opens)}, nil)
	if err == nil {
		err = opener.result(&stats)
	}
	if prober != nil {
		if perr := prober.stop(&loop); err == nil {
			err = perr
		}
	}
	return stats, loop, err
}

// timeWriteOpens is the "opens" child.
func timeWriteOpens(path string, n int) error {
	d := make([]time.Duration, n)
	var stats openStats
	for i := range d {
		called, start := monotonic(), time.Now()
		fd, err := unix.Open(path, unix.O_WRONLY|unix.O_CLOEXEC, 0)
		d[i] = time.Since(start)
		if err != nil {
			return err
		}
		if i == 0 {
			stats.FirstCalled, stats.FirstReturned = called, monotonic()
		}
		unix.Close(fd)
	}
	slices.Sort(d)
	stats.P50, stats.P99, stats.Max = percentile(d, 50), percentile(d, 99), d[n-1]
	return say(stats)
}

// probeLoop is the "probeloop" child: it probes until told to stop.
func probeLoop(path string) error {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	var stop atomic.Bool
	go func() {
		<-stdinClosed()
		stop.Store(true)
	}()
	if err := sayReady(); err != nil {
		return err
	}
	var stats loopStats
	for !stop.Load() {
		stats.Probes++
		switch err := leaseProbe(fd); err {
		case nil:
		case unix.EAGAIN:
			stats.Refused++
		default:
			return err
		}
	}
	return say(stats)
}

// leaseStats is what the "lease" child reports, on the shared clock.
type leaseStats struct {
	Taken, BreakSeen, Released int64
	SIGIO                      int64
}

// leaseBreak holds a lease while another process opens the file for
// writing, once as a plain Go program and once asking for SIGIO: the
// writer's open should wait for the release, and the holder, which Go
// spares the SIGIO unless it asks, should see nothing else.
func leaseBreak(self, path string, hold time.Duration) error {
	fmt.Printf("(d) A lease held %v while another process opens the file for writing (times from the lease taken):\n\n", hold)
	fmt.Printf("| holder | writer's open called | its open returned | holder saw the break (F_GETLEASE) | holder released | holder's end | SIGIO received |\n| --- | --- | --- | --- | --- | --- | --- |\n")
	for _, notify := range []bool{false, true} {
		if err := breakOnce(self, path, hold, notify); err != nil {
			return err
		}
	}
	fmt.Printf("\nA holder stopped while it holds the lease (SIGSTOP, a debugger, a frozen cgroup) keeps writers' opens waiting for fs.lease-break-time (%s s here), after which the kernel breaks the lease itself.\n", firstLine("/proc/sys/fs/lease-break-time"))
	return nil
}

func breakOnce(self, path string, hold time.Duration, notify bool) error {
	holder, err := startChild(self, "lease", []string{"-path", path, "-hold", hold.String(), fmt.Sprintf("-notify=%t", notify)}, nil)
	if err != nil {
		return err
	}
	if err := holder.waitReady(); err != nil {
		return err
	}
	writer, err := startChild(self, "opens", []string{"-path", path, "-n", "1"}, nil)
	if err != nil {
		return err
	}
	var w openStats
	var l leaseStats
	if err := writer.result(&w); err != nil {
		return err
	}
	holderErr := holder.result(&l)
	since := func(t int64) string {
		if t == 0 {
			return "never"
		}
		return fmt.Sprintf("+%.2f ms", float64(t-l.Taken)/1e6)
	}
	name, sigio, end := "plain Go program", "not asked for", "exit 0"
	if notify {
		name, sigio = "signal.Notify(SIGIO)", fmt.Sprint(l.SIGIO)
	}
	if holderErr != nil {
		end = holderErr.Error()
	}
	fmt.Printf("| %s | %s | %s | %s | %s | %s | %s |\n", name, since(w.FirstCalled), since(w.FirstReturned), since(l.BreakSeen), since(l.Released), end, sigio)
	return nil
}

// holdLease is the "lease" child: it takes a read lease, holds it for
// hold while watching for a break, and releases it.
func holdLease(path string, hold time.Duration, notify bool) error {
	var sigio atomic.Int64
	if notify {
		signals := make(chan os.Signal, 16)
		signal.Notify(signals, syscall.SIGIO)
		go func() {
			for range signals {
				sigio.Add(1)
			}
		}()
	}
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETLEASE, unix.F_RDLCK); err != nil {
		return err
	}
	stats := leaseStats{Taken: monotonic()}
	if err := sayReady(); err != nil {
		return err
	}
	stats.BreakSeen = watchForBreak(fd, time.Now().Add(hold))
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETLEASE, unix.F_UNLCK); err != nil {
		return err
	}
	stats.Released = monotonic()
	time.Sleep(20 * time.Millisecond) // for a signal still on its way
	stats.SIGIO = sigio.Load()
	return say(stats)
}

// watchForBreak polls the lease until deadline and returns when it first
// read as being broken (F_GETLEASE answers F_UNLCK while a break waits
// for the holder), 0 if never.
func watchForBreak(fd int, deadline time.Time) int64 {
	var seen int64
	for time.Now().Before(deadline) {
		if seen == 0 {
			if lease, err := unix.FcntlInt(uintptr(fd), unix.F_GETLEASE, 0); err == nil && lease == unix.F_UNLCK {
				seen = monotonic()
			}
		}
		time.Sleep(100 * time.Microsecond)
	}
	return seen
}
