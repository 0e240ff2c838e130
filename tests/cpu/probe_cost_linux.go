package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// probeCost times n probes on one descriptor, n with the open and close a
// probe of a path needs, and n opens and closes alone, to set them by.
func probeCost(path string, n int) error {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	pair, err := timeN(n, func() error { return leaseProbe(fd) })
	if err != nil {
		return err
	}
	withOpen, err := timeN(n, func() error { return openAnd(path, leaseProbe) })
	if err != nil {
		return err
	}
	openAlone, err := timeN(n, func() error { return openAnd(path, func(int) error { return nil }) })
	if err != nil {
		return err
	}
	heldRead, err := timeN(n, func() error { return openAnd(path, leaseAroundRead) })
	if err != nil {
		return err
	}
	readAlone, err := timeN(n, func() error { return openAnd(path, readWhole) })
	if err != nil {
		return err
	}
	fmt.Printf("(a) The probe's cost, %d of each, one after another:\n\n| what | p50 | p99 | max |\n| --- | --- | --- | --- |\n", n)
	for _, row := range []struct {
		what string
		d    []time.Duration
	}{{"F_RDLCK + F_UNLCK on an open descriptor", pair}, {"open, F_RDLCK + F_UNLCK, close", withOpen}, {"open, close (no probe)", openAlone},
		{"open, F_RDLCK, fstat + read, F_UNLCK, close (a watch's read)", heldRead}, {"open, fstat + read, close (no probe)", readAlone}} {
		fmt.Printf("| %s | %s | %s | %s |\n", row.what, micros(percentile(row.d, 50)), micros(percentile(row.d, 99)), micros(row.d[len(row.d)-1]))
	}
	fmt.Println()
	return nil
}

// leaseAroundRead reads the file whole under a lease, as a watch's read
// does: no writer gets in between the answer and the read.
func leaseAroundRead(fd int) error {
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETLEASE, unix.F_RDLCK); err != nil {
		return err
	}
	err := readWhole(fd)
	if _, uerr := unix.FcntlInt(uintptr(fd), unix.F_SETLEASE, unix.F_UNLCK); err == nil {
		err = uerr
	}
	return err
}

// readWhole reads the file at fd as far as fstat says it goes.
func readWhole(fd int) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	_, err := unix.Pread(fd, make([]byte, st.Size), 0)
	return err
}

func openAnd(path string, f func(fd int) error) error {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	err = f(fd)
	unix.Close(fd)
	return err
}

// timeN times n calls of f and returns their durations, sorted.
func timeN(n int, f func() error) ([]time.Duration, error) {
	d := make([]time.Duration, n)
	for i := range d {
		start := time.Now()
		if err := f(); err != nil {
			return nil, err
		}
		d[i] = time.Since(start)
	}
	slices.Sort(d)
	return d, nil
}

// probeAnswers probes the file as others hold it, each case in turn, and
// prints the kernel's answers against those expected.
func probeAnswers(self, dir, path string) error {
	rows, err := answers(self, dir, path)
	if err != nil {
		return err
	}
	fmt.Printf("(b) The probe's answers:\n\n| case | expected | answer |\n| --- | --- | --- |\n")
	for _, r := range rows {
		fmt.Printf("| %s | %s | %s |\n", r.name, r.expected, r.answer)
	}
	fmt.Println()
	return nil
}

type answerRow struct{ name, expected, answer string }

func answers(self, dir, path string) ([]answerRow, error) {
	cases := []struct {
		name, expected string
		probe          func() (string, error)
	}{
		{"no one else has it open", "ok", func() (string, error) { return probeHere(path), nil }},
		{"another process holds it open for writing", "EAGAIN", func() (string, error) { return whileHeld(self, path, "w") }},
		{"that writer has closed it", "ok", func() (string, error) { return probeHere(path), nil }},
		{"another process holds it open for reading only", "ok", func() (string, error) { return whileHeld(self, path, "r") }},
		{"this process holds it open for writing, on another descriptor", "EAGAIN", func() (string, error) { return whileHeldHere(path) }},
		{"as nobody (uid 65534), on root's file", "EACCES", func() (string, error) { return probeAsNobody(self, dir, path) }},
	}
	var rows []answerRow
	for _, c := range cases {
		got, err := c.probe()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.name, err)
		}
		rows = append(rows, answerRow{c.name, c.expected, got})
	}
	return rows, nil
}

func probeHere(path string) string {
	return answer(openAnd(path, leaseProbe))
}

// whileHeld probes while another process holds the file open, for
// reading (mode r) or writing (w).
func whileHeld(self, path, mode string) (string, error) {
	holder, err := startChild(self, "hold", []string{"-path", path, "-mode", mode}, nil)
	if err != nil {
		return "", err
	}
	if err := holder.waitReady(); err != nil {
		return "", err
	}
	got := probeHere(path)
	return got, holder.stop(&struct{}{})
}

func whileHeldHere(path string) (string, error) {
	w, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return "", err
	}
	defer w.Close()
	return probeHere(path), nil
}

// probeAsNobody probes from a process run as nobody, from a copy of this
// program where nobody may run it (the go command builds into a directory
// only its user may enter).
func probeAsNobody(self, dir, path string) (string, error) {
	if os.Getuid() != 0 {
		return "not measured: run as root", nil
	}
	exe := filepath.Join(dir, "keepwatch-cpu")
	b, err := os.ReadFile(self)
	if err == nil {
		err = os.WriteFile(exe, b, 0o755)
	}
	if err != nil {
		return "", err
	}
	defer os.Remove(exe)
	asNobody := func(cmd *exec.Cmd) {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534, NoSetGroups: true}}
	}
	c, err := startChild(exe, "probeas", []string{"-path", path}, asNobody)
	if err != nil {
		return "", err
	}
	var got probeResult
	err = c.result(&got)
	return got.Answer, err
}

// probeResult is the "probeas" child's answer.
type probeResult struct{ Answer string }

// holdOpen is the "hold" child: it holds path open until told to stop.
func holdOpen(path, mode string) error {
	flags := os.O_RDONLY
	if mode == "w" {
		flags = os.O_WRONLY
	}
	f, err := os.OpenFile(path, flags, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := sayReady(); err != nil {
		return err
	}
	<-stdinClosed()
	return say(struct{}{})
}

// probeOnce is the "probeas" child: one probe, its answer.
func probeOnce(path string) error {
	return say(probeResult{Answer: probeHere(path)})
}
