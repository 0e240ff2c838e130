//go:build unix

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"

	"github.com/keepwatch/file/kubevol"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The tests of what the commands print for paths, errors and signals as
// Unix spells them. Windows has no symlink a user may make by default, its
// own error texts, and no SIGINT to send.

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
	assert.Contains(t, stdout, fmt.Sprintf("ok       %-11s a watch on ", eventCheck))
	if runtime.GOOS == "linux" {
		assert.Contains(t, stdout, "ok       subPath     not a single-file bind mount")
		assert.Regexp(t, `limits +uid \d+ uses \d+ of \d+ inotify instances`, stdout)
	} else {
		// What it cannot check here, it says it did not.
		assert.Regexp(t, `subPath +not checked on `+runtime.GOOS, stdout)
		assert.Regexp(t, `limits +not checked on `+runtime.GOOS, stdout)
	}
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

func TestWatchPrintsEachUpdateAndProblem(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir()) // macOS's is under a symlink
	require.NoError(t, err)
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
	n := out.wait(t, 0, "watching", "mode=events", dir) // and on Linux every directory above it

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
