package file

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// Some tests need what a test process should not do to the machine it runs
// on: mount and unmount, or run as an unprivileged user. They run again in
// a child process of the test binary, set up for it, and the parent passes
// on the child's result. The child is the same test, told by childEnv that
// it is the child.

const childEnv = "KEEPWATCH_CHILD"

// inChild reports whether the test runs as the child of runChild.
func inChild(t *testing.T) bool {
	return os.Getenv(childEnv) == t.Name()
}

// inMountNamespace runs the test again in a child process with a mount
// namespace of its own, where it may mount freely: Go makes the child's
// mounts private, so none reaches the machine. It returns true in the
// child, which goes on with the test, and false in the parent. It needs
// root.
func inMountNamespace(t *testing.T) bool {
	t.Helper()
	if inChild(t) {
		return true
	}
	if os.Geteuid() != 0 {
		t.Skip("mounting needs root")
	}
	runChild(t, &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS})
	return false
}

// asNobody runs the test again in a child process as the user nobody and
// the group nogroup (65534), with env added to its environment. It returns
// true in the child and false in the parent. It needs root.
func asNobody(t *testing.T, env ...string) bool {
	t.Helper()
	if inChild(t) {
		return true
	}
	if os.Geteuid() != 0 {
		t.Skip("changing user needs root")
	}
	runChild(t, &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}, env...)
	return false
}

// runChild runs the test binary for this one test, with attr, and fails the
// test if the child fails. The binary is copied where anyone may run it.
func runChild(t *testing.T, attr *syscall.SysProcAttr, env ...string) {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.Chmod(filepath.Dir(dir), 0o755))
	require.NoError(t, os.Chmod(dir, 0o755))
	bin := filepath.Join(dir, "test.bin")
	copyFile(t, os.Args[0], bin)
	cmd := exec.Command(bin, "-test.run=^"+t.Name()+"$", "-test.count=1", "-test.v")
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), childEnv+"="+t.Name()), env...)
	cmd.SysProcAttr = attr
	out, err := cmd.CombinedOutput()
	t.Logf("child:\n%s", indent(string(out)))
	require.NoError(t, err, "the child failed")
	require.Contains(t, string(out), "--- PASS: "+t.Name(), "the child ran the test")
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	src, err := os.Open(from)
	require.NoError(t, err)
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o755)
	require.NoError(t, err)
	_, err = io.Copy(dst, src)
	require.NoError(t, err)
	require.NoError(t, dst.Close())
}

func indent(s string) string {
	return "\t" + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n\t")
}
