package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/keepwatch/file/kubevol"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// These tests build the command and run it as a user would.

var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "keepwatch-cmd")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "keepwatch")
	build := exec.Command("go", "build", "-o", binary, ".")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building keepwatch:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// runCmd runs the binary to the end and returns its output and exit code.
func runCmd(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd := exec.Command(binary, args...)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return out.String(), errOut.String(), code
}

func TestUsage(t *testing.T) {
	_, stderr, code := runCmd(t)
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "keepwatch doctor [flags] PATH")

	stdout, _, code := runCmd(t, "--help")
	assert.Equal(t, 0, code)
	assert.Contains(t, stdout, "keepwatch watch [flags] PATH")

	for _, c := range []string{"watch", "doctor"} {
		_, stderr, code := runCmd(t, c, "-h")
		assert.Equal(t, 0, code, c)
		assert.Contains(t, stderr, "Usage: keepwatch "+c+" [flags] PATH")
		assert.Contains(t, stderr, "Flags:")

		_, stderr, code = runCmd(t, c)
		assert.Equal(t, 2, code, c)
		assert.Contains(t, stderr, "want one PATH")
	}
	_, stderr, code = runCmd(t, "frobnicate")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, `unknown command "frobnicate"`)
}

func TestDoctorOnAConfigMapVolume(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "config")
	_, err := kubevol.New(dir, map[string]string{"app.yaml": "a: 1\n"})
	require.NoError(t, err)

	stdout, _, code := runCmd(t, "doctor", filepath.Join(dir, "app.yaml"))
	t.Log("\n" + stdout)
	assert.Equal(t, 0, code)
	assert.Regexp(t, `chain +\S+/config/app.yaml -> \.\.data/app.yaml`, stdout)
	assert.Regexp(t, `\S+/config/\.\.data -> \.\.\d{4}_`, stdout)
	assert.Contains(t, stdout, "ok       file        regular, 5 bytes, readable")
	assert.Contains(t, stdout, "kubelet volume (ConfigMap, Secret or projected)")
	assert.Contains(t, stdout, "ok       subPath     not a single-file bind mount")
	assert.Contains(t, stdout, "ok       inotify     a watch on ")
	assert.Regexp(t, `limits +uid \d+ uses \d+ of \d+ inotify instances`, stdout)
	assert.Contains(t, stdout, "verdict: hot reload will work")
}

// A subPath mount as a pod's mount table shows it: the doctor says so and
// fails.
func TestDoctorOnASubPathMount(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(path, []byte("a: 1\n"), 0o644))
	table := filepath.Join(t.TempDir(), "mountinfo")
	base, err := os.ReadFile("../../testdata/mountinfo-subpath")
	require.NoError(t, err)
	line := "1600 1581 259:1 /var/lib/kubelet/pods/8c1f/volume-subpaths/cfg/app/0 " + path + " ro,relatime - ext4 /dev/nvme0n1p1 rw\n"
	require.NoError(t, os.WriteFile(table, append(base, line...), 0o644))

	stdout, _, code := runCmd(t, "doctor", "-mountinfo", table, path)
	t.Log("\n" + stdout)
	assert.Equal(t, 1, code)
	assert.Contains(t, stdout, "PROBLEM  subPath     "+path+" is a bind mount of a single file")
	assert.Contains(t, stdout, "verdict: hot reload will NOT work")

	// The recorded pod's own subPath file, checked from its mount table.
	stdout, _, code = runCmd(t, "doctor", "-mountinfo", "../../testdata/mountinfo-subpath", "/etc/app/config.yaml")
	assert.Equal(t, 1, code)
	assert.Contains(t, stdout, "PROBLEM  subPath     /etc/app/config.yaml is a bind mount")
}

func TestDoctorOnBadPaths(t *testing.T) {
	dir := t.TempDir()
	stdout, _, code := runCmd(t, "doctor", filepath.Join(dir, "missing.yaml"))
	assert.Equal(t, 1, code)
	assert.Contains(t, stdout, "PROBLEM  chain       lstat "+filepath.Join(dir, "missing.yaml")+": no such file or directory")

	stdout, _, code = runCmd(t, "doctor", dir)
	assert.Equal(t, 1, code)
	assert.Contains(t, stdout, "is not a regular file")

	require.NoError(t, os.Symlink("loop", filepath.Join(dir, "loop")))
	stdout, _, code = runCmd(t, "doctor", filepath.Join(dir, "loop"))
	assert.Equal(t, 1, code)
	assert.Contains(t, stdout, "too many levels of symbolic links")
}

// lines reads a running command's output line by line.
type lines struct {
	mu  sync.Mutex
	all []string
}

func (l *lines) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		l.mu.Lock()
		l.all = append(l.all, sc.Text())
		l.mu.Unlock()
	}
}

func (l *lines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.all, "\n")
}

// wait waits for a line, after the n-th, that contains each of parts, and
// returns its index.
func (l *lines) wait(t *testing.T, n int, parts ...string) int {
	t.Helper()
	found := -1
	require.Eventually(t, func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		for i := n; i < len(l.all); i++ {
			if containsAll(l.all[i], parts) {
				found = i
				return true
			}
		}
		return false
	}, 10*time.Second, 10*time.Millisecond, "no line with %q in:\n%s", parts, l)
	return found
}

func containsAll(s string, parts []string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

func TestWatchPrintsEachUpdateAndProblem(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.yaml")
	write := func(data string) {
		require.NoError(t, os.WriteFile(path+".tmp", []byte(data), 0o644))
		require.NoError(t, os.Rename(path+".tmp", path))
	}
	write("a: 1\nb: 2\n")

	cmd := exec.Command(binary, "watch", path)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	out := &lines{}
	done := make(chan struct{})
	go func() { defer close(done); out.read(stdout) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-done; _ = cmd.Wait() })

	out.wait(t, 0, "loaded", "size=10", "keys=2")
	n := out.wait(t, 0, "watching", "mode=events", "dirs=/,", ","+dir)

	write("a: 1\nb: 3\nc: 4\n")
	n = out.wait(t, n, "update", "op=WRITE", "reason=event", "size=15", "keys=~b,+c")
	write("# a comment\na: 1\nb: 3\nc: 4\n")
	n = out.wait(t, n, "update", "keys=unchanged")
	write("a: 1\n")
	n = out.wait(t, n, "update", "keys=-b,-c")

	require.NoError(t, os.Remove(path))
	n = out.wait(t, n, "problem", "no such file or directory")
	write("a: 2\n")
	n = out.wait(t, n, "update", "op=CREATE", "keys=~a")

	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	out.wait(t, n, "stopped", "updates=4", "problems=1")
	<-done
	require.NoError(t, cmd.Wait(), "an interrupt is the normal end")
	t.Log("\n" + out.String())
}
