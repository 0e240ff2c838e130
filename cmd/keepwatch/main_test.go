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
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// These tests build the command and run it as a user would.

var binary string

// binaryEnv hands the binary built to a test run again in a child process
// (inMountNamespace), which builds none.
const binaryEnv = "KEEPWATCH_BINARY"

func TestMain(m *testing.M) {
	if binary = os.Getenv(binaryEnv); binary != "" {
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "keepwatch-cmd")
	if err != nil {
		panic(err)
	}
	// Tests run it as nobody too: anyone may enter dir and run it.
	if err := os.Chmod(dir, 0o755); err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "keepwatch")
	if runtime.GOOS == "windows" {
		binary += ".exe"
	}
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
	assert.Contains(t, stderr, "keepwatch doctor [flags] PATH...")

	stdout, _, code := runCmd(t, "--help")
	assert.Equal(t, 0, code)
	assert.Contains(t, stdout, "keepwatch watch [flags] PATH...")

	for _, c := range []string{"watch", "doctor"} {
		_, stderr, code := runCmd(t, c, "-h")
		assert.Equal(t, 0, code, c)
		assert.Contains(t, stderr, "Usage: keepwatch "+c+" [flags] PATH...")
		assert.Contains(t, stderr, "keepwatch "+c+" [flags] -set DIR NAME...")
		assert.Contains(t, stderr, "as file.Glob(PATH/*)")
		assert.Contains(t, stderr, "Flags:")

		_, stderr, code = runCmd(t, c)
		assert.Equal(t, 2, code, c)
		assert.Contains(t, stderr, "want at least one PATH")

		_, stderr, code = runCmd(t, c, "-set", "/etc/authz")
		assert.Equal(t, 2, code, c)
		assert.Contains(t, stderr, "want at least one NAME of the set's files")
	}
	_, stderr, code = runCmd(t, "frobnicate")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, `unknown command "frobnicate"`)
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

// count counts the lines that contain each of parts.
func (l *lines) count(parts ...string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, s := range l.all {
		if containsAll(s, parts) {
			n++
		}
	}
	return n
}

func containsAll(s string, parts []string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}
