package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// The lease probe asks the kernel whether anyone holds a file open for
// writing: a read lease is refused (EAGAIN) while anyone does. It is
// released at once, for while it is held a writer's open waits.
func leaseProbe(fd int) error {
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETLEASE, unix.F_RDLCK); err != nil {
		return err
	}
	_, err := unix.FcntlInt(uintptr(fd), unix.F_SETLEASE, unix.F_UNLCK)
	return err
}

// answer names a probe's outcome: "ok" or the errno's name.
func answer(err error) string {
	var errno unix.Errno
	switch {
	case err == nil:
		return "ok"
	case errors.As(err, &errno):
		return unix.ErrnoName(errno)
	}
	return err.Error()
}

type probeOptions struct {
	pairs int
	opens int
	reps  int
	hold  time.Duration
	base  string
}

// runProbe measures the probe: (a) its cost, (b) its answers, (c) the
// delay a probing loop adds to another process's write-opens, (d) what a
// lease break does to the Go program holding the lease.
func runProbe(args []string) error {
	var o probeOptions
	fs := flag.NewFlagSet("probe", flag.ContinueOnError)
	fs.IntVar(&o.pairs, "pairs", 100_000, "probes timed, for their cost")
	fs.IntVar(&o.opens, "opens", 10_000, "write-opens timed, with and without a probing loop")
	fs.IntVar(&o.reps, "reps", 3, "repetitions of the write-opens")
	fs.DurationVar(&o.hold, "hold", 50*time.Millisecond, "how long the lease is held while a writer opens")
	fs.StringVar(&o.base, "base", os.TempDir(), "where the probed file's directory is made")
	if err := fs.Parse(args); err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	dir, err := probeDir(o.base)
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "config.yaml")
	fmt.Printf("The lease probe: fcntl(F_SETLEASE, F_RDLCK), then F_UNLCK, on an O_RDONLY descriptor.\n")
	fmt.Printf("%s, %s, %d CPUs, Linux %s, uid %d; fs.leases-enable %s, fs.lease-break-time %s s; load average %s\n\n",
		time.Now().Format("2006-01-02 15:04"), runtime.Version(), runtime.NumCPU(), firstLine("/proc/sys/kernel/osrelease"),
		os.Getuid(), firstLine("/proc/sys/fs/leases-enable"), firstLine("/proc/sys/fs/lease-break-time"), loadAverage())
	if err := probeCost(path, o.pairs); err != nil {
		return err
	}
	if err := probeAnswers(self, dir, path); err != nil {
		return err
	}
	if err := writerDelay(self, path, o.opens, o.reps); err != nil {
		return err
	}
	return leaseBreak(self, path, o.hold)
}

// probeDir makes the directory of the probed file, root's file when run
// as root, which nobody may read but not lease.
func probeDir(base string) (string, error) {
	dir, err := os.MkdirTemp(base, "keepwatch-probe-")
	if err != nil {
		return "", err
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		return "", err
	}
	return dir, os.WriteFile(filepath.Join(dir, "config.yaml"), []byte(configText), 0o644)
}

// runProbeChild runs one of the probe's children.
func runProbeChild(role string, args []string) error {
	fs := flag.NewFlagSet(role, flag.ContinueOnError)
	path := fs.String("path", "", "the probed file")
	mode := fs.String("mode", "r", "hold: r or w")
	n := fs.Int("n", 1, "opens: how many")
	hold := fs.Duration("hold", 50*time.Millisecond, "lease: how long")
	notify := fs.Bool("notify", false, "lease: ask for SIGIO")
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch role {
	case "hold":
		return holdOpen(*path, *mode)
	case "probeas":
		return probeOnce(*path)
	case "probeloop":
		return probeLoop(*path)
	case "opens":
		return timeWriteOpens(*path, *n)
	case "lease":
		return holdLease(*path, *hold, *notify)
	}
	return fmt.Errorf("%w %q", errUnknownRole, role)
}

// monotonic is CLOCK_MONOTONIC in nanoseconds, which processes share.
func monotonic() int64 {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return ts.Nano()
}

// micros prints a duration in microseconds.
func micros(d time.Duration) string {
	return threeDigits(float64(d)/float64(time.Microsecond)) + " µs"
}

// percentile is the p-th percentile of sorted, p in 0..100.
func percentile(sorted []time.Duration, p int) time.Duration {
	return sorted[min(len(sorted)-1, len(sorted)*p/100)]
}
