// Command cpu measures what others' activity near a watched config costs
// the process that watches it, in CPU time, for keepwatch, koanf's stock
// file provider and a bare inotify reader (issue 38); with "probe", what
// the kernel's lease probe costs, answers, and does to others' opens; and
// with "writers", how long another process's open of the config for
// writing waits on a watch, running or stopped (issue 42); with "batches",
// how an in-place write's events come to a reader, batch by batch. `make
// bench-cpu`, `make bench-probe` and `make bench-writers` run it;
// docs/benchmarks.md says how to read them.
//
//	go run . cpu [-reps 3] [-trees "/old/tree /new/tree"] [-loads ...] [-watchers ...]
//	go run . probe
//	go run . writers [-trees "/old/tree /new/tree"] [-parts opens,stopped] [-dir /dev/shm] [-runs 20] ...
//	go run . batches [-dir /tmp] [-updates 1000]
//
// Every watcher and every load runs in a process of its own, so that the
// CPU a watcher reports (getrusage of its own process) is its own and
// nothing else's: the same binary started again, with the environment
// variable KEEPWATCH_CPU_CHILD naming the part it plays.
package main

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// childEnv names the part a child process plays: "watch", "load", or one
// of the probe's or the writers command's parts.
const childEnv = "KEEPWATCH_CPU_CHILD"

func main() {
	if role := os.Getenv(childEnv); role != "" {
		os.Exit(runChild(role, os.Args[1:]))
	}
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "cpu:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	command := "cpu"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		command, args = args[0], args[1:]
	}
	switch command {
	case "cpu":
		return runCPU(args)
	case "probe":
		return runProbe(args)
	case "writers":
		return runWriters(args)
	case "batches":
		return runBatches(args)
	}
	return fmt.Errorf("unknown command %q: cpu, probe, writers or batches", command)
}

func runChild(role string, args []string) int {
	var err error
	switch role {
	case "watch":
		err = runWatch(args)
	case "load":
		err = runLoad(args)
	case roleWatching, roleRewrite:
		err = runWritersChild(role, args)
	case roleBatchWriter:
		err = runBatchWriter(args)
	default:
		err = runProbeChild(role, args)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "cpu %s: %v\n", role, err)
		return 1
	}
	return 0
}

var errUnknownRole = errors.New("unknown child role")
