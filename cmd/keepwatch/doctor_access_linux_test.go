package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/keepwatch/file/kubevol"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The doctor's cases that depend on who runs it: as root, which passes
// any permission, and as nobody (uid and gid 65534), as a service that
// does not run as root. They need root, to be both.

var nobody = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}

// asNobody runs the binary as nobody to the end.
func asNobody(t *testing.T, args ...string) (stdout string, code int) {
	t.Helper()
	var out bytes.Buffer
	cmd := exec.Command(binary, args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = nobody
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return out.String(), code
}

func needRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("running as root and as nobody needs root")
	}
}

// dirWith makes base/name with mode, owner root and group gid, holding
// app.yaml (mode 0644).
func dirWith(t *testing.T, base, name string, mode os.FileMode, gid int) string {
	t.Helper()
	dir := filepath.Join(base, name)
	require.NoError(t, os.Mkdir(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "app.yaml"), []byte("a: 1\n"), 0o644))
	require.NoError(t, os.Chown(dir, 0, gid))
	require.NoError(t, os.Chmod(dir, mode))
	return filepath.Join(dir, "app.yaml")
}

// A directory on the way that a user may not enter: as that user, the
// doctor names it, with its mode and owner; as root, which may, it says
// who else may not.
func TestDoctorNamesTheDirectoryThatBlocksAccess(t *testing.T) {
	needRoot(t)
	base := tempDir(t)
	const rootDir = "owner uid 0 (root), group gid 0 (root)"

	locked := dirWith(t, base, "locked", 0, 0)
	stdout, _, code := runCmd(t, "doctor", locked)
	t.Log("as root:\n" + stdout)
	assert.Equal(t, 0, code)
	assert.Contains(t, stdout, "ok       file        regular, 5 bytes, readable\n"+
		"warn     access      read as root, which passes any permission; but "+filepath.Dir(locked)+" has mode 0000 (d---------), "+rootDir+
		": no one but root may enter it, so a service that runs as another user cannot read the file\n")
	assert.Contains(t, stdout, "verdict: hot reload will work with keepwatch; read the warnings above")

	stdout, code = asNobody(t, "doctor", locked)
	t.Log("as nobody:\n" + stdout)
	assert.Equal(t, 1, code)
	assert.Contains(t, stdout, "PROBLEM  chain       lstat "+locked+": permission denied\n"+
		"PROBLEM  access      uid 65534 (nobody) may not enter "+filepath.Dir(locked)+": mode 0000 (d---------), "+rootDir+"\n")
	assert.Contains(t, stdout, "verdict: hot reload will NOT work")
	assert.NotContains(t, stdout, "polling", "the library waits on the directory above for it to open")
	assert.Contains(t, stdout, "         layout      not checked: uid 65534 (nobody) may not look in "+filepath.Dir(locked)+" for a ..data link\n",
		"nobody cannot know whether there is one")
	assert.NotContains(t, stdout, "no ..data link")

	// A group's directory: its group may enter, others not.
	team := dirWith(t, base, "team", 0o750, 65534)
	stdout, _, code = runCmd(t, "doctor", team)
	assert.Equal(t, 0, code)
	assert.Contains(t, stdout, "but "+filepath.Dir(team)+" has mode 0750 (drwxr-x---), owner uid 0 (root), group gid 65534 (nogroup): "+
		"only its owner, uid 0 (root), and group gid 65534 (nogroup), may enter it")
	stdout, code = asNobody(t, "doctor", team)
	assert.Equal(t, 0, code, "nobody is in the group:\n%s", stdout)
	assert.NotContains(t, stdout, "access")

	// A file that only its owner may read.
	open := filepath.Join(base, "open")
	require.NoError(t, os.Mkdir(open, 0o755))
	secret := filepath.Join(open, "key.pem")
	require.NoError(t, os.WriteFile(secret, []byte("k\n"), 0o600))
	stdout, _, _ = runCmd(t, "doctor", secret)
	assert.Contains(t, stdout, "but "+secret+" has mode 0600 (-rw-------), "+rootDir+": no one but root may read it")
	stdout, code = asNobody(t, "doctor", secret)
	assert.Equal(t, 1, code)
	assert.Contains(t, stdout, "PROBLEM  access      uid 65534 (nobody) may not read "+secret+": mode 0600 (-rw-------), "+rootDir+"\n")
}

// A directory that may be entered but not listed (0711, like Debian's
// /etc/ssl/private at 0710): inotify refuses to watch it, and the library
// watches the file itself, on events. The doctor says so, where it used to
// predict polling; the library's own watch, run as nobody beside it, runs
// on events.
func TestDoctorOnADirectoryThatCannotBeListed(t *testing.T) {
	needRoot(t)
	path := dirWith(t, tempDir(t), "private", 0o711, 0)
	dir := filepath.Dir(path)

	stdout, code := asNobody(t, "doctor", path)
	t.Log("as nobody:\n" + stdout)
	assert.Equal(t, 0, code)
	assert.Contains(t, stdout, "ok       inotify     "+dir+" (mode 0711 (drwx--x--x), owner uid 0 (root), group gid 0 (root)) cannot be watched by uid 65534 (nobody): permission denied; "+
		"a watch on the file itself works (inotify), and keepwatch watches it there, on events\n")
	assert.NotContains(t, stdout, "polling")
	assert.Contains(t, stdout, "verdict: hot reload will work\n")

	stdout, _, code = runCmd(t, "doctor", path)
	assert.Equal(t, 0, code)
	assert.Contains(t, stdout, "ok       inotify     a watch on "+dir+" works (inotify)")
	assert.NotContains(t, stdout, "access", "everyone may enter it")

	w := &watching{cmd: exec.Command(binary, "watch", path), out: &lines{}, done: make(chan struct{})}
	w.cmd.SysProcAttr = nobody
	out, err := w.cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, w.cmd.Start())
	go func() { defer close(w.done); w.out.read(out) }()
	t.Cleanup(func() { _ = w.cmd.Process.Kill(); <-w.done; _ = w.cmd.Wait() })
	w.out.wait(t, 0, "watching", "mode=events")
	w.stop(t)
}

// A key the volume does not have: the doctor lists the keys it has.
func TestDoctorListsTheKeysOfAVolumeWithoutTheKey(t *testing.T) {
	dir := filepath.Join(tempDir(t), "config")
	_, err := kubevol.New(dir, map[string]string{"app.yaml": "a: 1\n", "roles.yaml": "r: 1\n"})
	require.NoError(t, err)
	stdout, _, code := runCmd(t, "doctor", filepath.Join(dir, "app.yml"))
	t.Log("\n" + stdout)
	assert.Equal(t, 1, code)
	assert.Contains(t, stdout, "PROBLEM  layout      kubelet volume (ConfigMap, Secret or projected) with no key app.yml: its keys are app.yaml, roles.yaml\n")
	assert.NotContains(t, stdout, "does not lead through ..data")
}

func TestPlural(t *testing.T) {
	assert.Equal(t, "1 process", plural(1, "process", "processes"))
	assert.Equal(t, "0 processes", plural(0, "process", "processes"))
	assert.Equal(t, "74 processes", plural(74, "process", "processes"))
}

// The doctor says whether the kernel tells the user it runs as who holds
// the file open for writing, as the library asks it: it tells root, and
// the file's owner; it does not tell nobody of root's file. And whether
// the file's change times are fine enough that no read holds a writer up.
func TestDoctorSaysWhetherTheKernelTellsWhoWrites(t *testing.T) {
	needRoot(t)
	path := dirWith(t, tempDir(t), "app", 0o755, 0)
	stdout, _, _ := runCmd(t, "doctor", path)
	assert.Contains(t, stdout, "ok       writers     the kernel says who holds the file open for writing, to uid 0: "+
		"a writer no event told of is waited for until its close; an edit in place is read by the count of the file's opens and closes, with no lease\n")
	assert.Regexp(t, `(?m)^(ok       times       fine|         times       coarse)`, stdout)
	stdout, _ = asNobody(t, "doctor", path)
	assert.Contains(t, stdout, "         writers     the kernel does not tell uid 65534 who holds the file open for writing "+
		"(not its owner, uid 0, and no CAP_LEASE): a writer no event told of is given 25 ms, and an edit in place is read by "+
		"the count of the file's opens and closes once a read was accepted (reliability.md)\n")
}
