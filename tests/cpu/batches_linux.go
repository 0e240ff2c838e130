package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// roleBatchWriter is the batches command's writer process.
const roleBatchWriter = "batch-writer"

// runBatches asks whether a read at an in-place write's event could be
// handed on at the writer's close: how often a reader that blocks on the
// file's inotify watch reads the write's event before the close's.
// Another process rewrites the file with os.WriteFile (open with O_TRUNC,
// one write, close), as BenchmarkLatency's in-place update does; the
// reader tallies, per update, the batches its reads returned: "O|M|MC" is
// the open read alone, then a modification, then a modification and the
// close. Only where the close's batch holds no modification was a write's
// event read before the close, with the writer done writing: there a read
// begun at that event could stand for the close's (docs/benchmarks.md,
// "Run of 2026-11-29, seventh").
func runBatches(args []string) error {
	fs := flag.NewFlagSet("batches", flag.ContinueOnError)
	dir := fs.String("dir", os.TempDir(), "the directory of the file rewritten")
	updates := fs.Int("updates", 1000, "the updates to make")
	pause := fs.Duration("pause", 5*time.Millisecond, "the pause after each update")
	size := fs.Int("size", 1024, "the file's size in bytes")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *updates < 1 || *size < 1 {
		return errors.New("batches: -updates and -size must be at least 1")
	}
	shapes, err := tallyBatches(*dir, *updates, *pause, *size)
	if err != nil {
		return err
	}
	reportBatches(os.Stdout, *dir, shapes)
	return nil
}

// tallyBatches makes the updates from a writer process and returns how
// many updates each shape of batches had.
func tallyBatches(dir string, updates int, pause time.Duration, size int) (map[string]int, error) {
	work, err := os.MkdirTemp(dir, "keepwatch-batches-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	path := filepath.Join(work, "config.yaml")
	if err := os.WriteFile(path, make([]byte, size), 0o644); err != nil {
		return nil, err
	}
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	if _, err := unix.InotifyAddWatch(fd, path, unix.IN_OPEN|unix.IN_MODIFY|unix.IN_CLOSE_WRITE); err != nil {
		return nil, err
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe, "-path", path, "-updates", strconv.Itoa(updates), "-pause", pause.String(), "-size", strconv.Itoa(size))
	cmd.Env = append(os.Environ(), childEnv+"="+roleBatchWriter)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	shapes, readErr := readBatches(fd, updates)
	if err := cmd.Wait(); err != nil {
		return nil, fmt.Errorf("batches: the writer: %w", err)
	}
	return shapes, readErr
}

// readBatches reads the watch until it has seen updates closes, and
// returns each update's shape: its batches, "|" between them.
func readBatches(fd, updates int) (map[string]int, error) {
	shapes := map[string]int{}
	buf := make([]byte, 64<<10)
	var shape strings.Builder
	for seen := 0; seen < updates; {
		// A writer that failed makes no more events: wait for one a while.
		ready, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, 5000)
		if err == unix.EINTR {
			continue
		}
		if err == nil && ready == 0 {
			err = fmt.Errorf("no event for 5 s after %d updates", seen)
		}
		if err != nil {
			return nil, fmt.Errorf("batches: %w", err)
		}
		n, err := unix.Read(fd, buf)
		if err != nil {
			return nil, fmt.Errorf("batches: %w", err)
		}
		if shape.Len() > 0 {
			shape.WriteByte('|')
		}
		// A read behind the writer holds more than one update: each close
		// ends its update's shape, and what follows it in the read begins
		// the next one's.
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			off += unix.SizeofInotifyEvent + int(ev.Len)
			switch {
			case ev.Mask&unix.IN_OPEN != 0:
				shape.WriteByte('O')
			case ev.Mask&unix.IN_MODIFY != 0:
				shape.WriteByte('M')
			case ev.Mask&unix.IN_CLOSE_WRITE != 0:
				shape.WriteByte('C')
				shapes[shape.String()]++
				shape.Reset()
				seen++
			}
		}
	}
	return shapes, nil
}

// writeBeforeClose reports whether, in shape, a modification was read in
// a batch before the close's, and none with the close.
func writeBeforeClose(shape string) bool {
	before, last := splitClose(shape)
	return !strings.Contains(last, "M") && strings.Contains(before, "M")
}

// modifiedBeforeClose reports whether, in shape, any modification (the
// truncation's or the write's) was read in a batch before the close's.
func modifiedBeforeClose(shape string) bool {
	before, _ := splitClose(shape)
	return strings.Contains(before, "M")
}

// splitClose returns shape's batches before the close's, and the close's.
func splitClose(shape string) (before, last string) {
	i := strings.LastIndexByte(shape, '|')
	if i < 0 {
		return "", shape
	}
	return shape[:i], shape[i+1:]
}

func reportBatches(w *os.File, dir string, shapes map[string]int) {
	var fs unix.Statfs_t
	kind := "?"
	if unix.Statfs(dir, &fs) == nil {
		kind = fmt.Sprintf("0x%x", fs.Type)
	}
	total, before, modified := 0, 0, 0
	keys := make([]string, 0, len(shapes))
	for s, n := range shapes {
		keys = append(keys, s)
		total += n
		if writeBeforeClose(s) {
			before += n
		}
		if modifiedBeforeClose(s) {
			modified += n
		}
	}
	slices.SortFunc(keys, func(a, b string) int { return shapes[b] - shapes[a] })
	fmt.Fprintf(w, "batches read by a blocking inotify reader, %d in-place updates in %s (filesystem magic %s):\n", total, dir, kind)
	for _, s := range keys {
		fmt.Fprintf(w, "  %6d  %s\n", shapes[s], s)
	}
	pct := func(n int) float64 { return 100 * float64(n) / float64(total) }
	fmt.Fprintf(w, "a modification read before the close's batch: %d of %d (%.1f%%)\n", modified, total, pct(modified))
	fmt.Fprintf(w, "of them, the close's batch holding none (the write's event read before the close's): %d (%.1f%%)\n", before, pct(before))
}

// runBatchWriter is the writer process: os.WriteFile of the file, with
// content that changes, updates times.
func runBatchWriter(args []string) error {
	fs := flag.NewFlagSet(roleBatchWriter, flag.ContinueOnError)
	path := fs.String("path", "", "the file")
	updates := fs.Int("updates", 0, "the updates")
	pause := fs.Duration("pause", 0, "the pause after each")
	size := fs.Int("size", 1024, "the size")
	if err := fs.Parse(args); err != nil {
		return err
	}
	data := make([]byte, *size)
	for i := range *updates {
		copy(data, strconv.Itoa(i))
		if err := os.WriteFile(*path, data, 0o644); err != nil {
			return err
		}
		time.Sleep(*pause)
	}
	return nil
}
