package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// childEnv tells the test binary that it runs as the child of
// inMountNamespace, for the test it names.
const childEnv = "KEEPWATCH_CMD_CHILD"

// inMountNamespace runs the test again in a child process with a mount
// namespace of its own, where it may mount: Go makes the child's mounts
// private, so none reaches the machine, and they end with it. The commands
// the child runs are in its namespace. It returns true in the child and
// false in the parent, which passes on the child's result. It needs root.
func inMountNamespace(t *testing.T) bool {
	t.Helper()
	if os.Getenv(childEnv) == t.Name() {
		return true
	}
	if os.Geteuid() != 0 {
		t.Skip("mounting needs root")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), childEnv+"="+t.Name(), binaryEnv+"="+binary)
	cmd.SysProcAttr = &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS}
	out, err := cmd.CombinedOutput()
	t.Logf("child:\n%s", out)
	require.NoError(t, err, "the child failed")
	require.Contains(t, string(out), "--- PASS: "+t.Name(), "the child ran the test")
	return false
}

// A single file mounted on its own, for real, as docker's
// -v ./config.yaml:/etc/app/config.yaml makes it: doctor passes it with a
// warning, and watch prints each edit in place of the source; once a new
// file is renamed over the source on the host side, watch prints the
// problem at once and doctor fails; the mount made again, both are back.
func TestDoctorAndWatchOnASingleFileMount(t *testing.T) {
	if !inMountNamespace(t) {
		return
	}
	dir, err := filepath.EvalSymlinks(tempDir(t))
	require.NoError(t, err)
	source, point := filepath.Join(dir, "host", "config.yaml"), filepath.Join(dir, "etc", "app", "config.yaml")
	require.NoError(t, os.MkdirAll(filepath.Dir(source), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Dir(point), 0o755))
	require.NoError(t, os.WriteFile(source, []byte("a: 1\n"), 0o644))
	require.NoError(t, os.WriteFile(point, nil, 0o644))
	require.NoError(t, syscall.Mount(source, point, "", syscall.MS_BIND, ""))
	t.Cleanup(func() { _ = syscall.Unmount(point, syscall.MNT_DETACH) })

	stdout, _, code := runCmd(t, "doctor", point)
	t.Log("\n" + stdout)
	assert.Equal(t, 0, code, "edits in place reload")
	assert.Contains(t, stdout, "warn     file mount  "+point+" is a single file mounted on its own (from "+source+"): an edit in place of its source arrives; "+
		"a replacement of the source (sed -i, most editors' saves, mv) never does")
	assert.Contains(t, stdout, "verdict: hot reload will work for edits in place only: a replacement of the mounted file does not arrive; mount the directory instead\n")

	w := startWatch(t, point)
	n := w.out.wait(t, 0, "problem", "watch "+point+": keepwatch: single-file mount from "+source)
	require.NoError(t, os.WriteFile(source, []byte("a: 2\n"), 0o644))
	n = w.out.wait(t, n, "update", "op=WRITE", "keys=~a")

	require.NoError(t, os.WriteFile(source+".tmp", []byte("a: 3\n"), 0o644))
	require.NoError(t, os.Rename(source+".tmp", source)) // sed -i, an editor's save
	n = w.out.wait(t, n, "problem", "watch "+point+": keepwatch: mount source replaced: "+source+" was replaced")
	stdout, _, code = runCmd(t, "doctor", point)
	t.Log("\n" + stdout)
	assert.Equal(t, 1, code)
	assert.Contains(t, stdout, "PROBLEM  file mount  "+point+" is a single file mounted on its own, and its source was replaced on the host side "+
		"(the mount table shows "+source+"//deleted; the file it holds has no name left)")

	require.NoError(t, syscall.Unmount(point, syscall.MNT_DETACH)) // the mount made again (detached: a read may hold it busy a moment)
	require.NoError(t, syscall.Mount(source, point, "", syscall.MS_BIND, ""))
	w.out.wait(t, n, "update", "size=5") // a: 3 (the mount point's own empty file may come between)
	_, _, code = runCmd(t, "doctor", point)
	assert.Equal(t, 0, code)
	w.stop(t)
	assert.Equal(t, 2, w.out.count(" problem "), "each told once")
}
