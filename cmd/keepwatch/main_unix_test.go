//go:build unix

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/keepwatch/file/kubevol"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The tests of what the commands print for paths, errors and signals as
// Unix spells them. Windows has no symlink a user may make by default, its
// own error texts, and no SIGINT to send.

func TestDoctorOnAConfigMapVolume(t *testing.T) {
	dir := filepath.Join(tempDir(t), "config")
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
		assert.Contains(t, stdout, "ok       file mount  not a single file mounted on its own")
		assert.Regexp(t, `limits +uid \d+ uses \d+ of \d+ inotify instances`, stdout)
	} else {
		// What it cannot check here, it says it did not.
		assert.Regexp(t, `file mount +not checked on `+runtime.GOOS, stdout)
		assert.Regexp(t, `limits +not checked on `+runtime.GOOS, stdout)
	}
	assert.Contains(t, stdout, "verdict: hot reload will work")
}

// A single file mounted on its own, as a pod's mount table shows a
// subPath mount: the doctor warns that edits in place arrive and a
// replacement does not, and passes, for edits in place do reload. Its
// source replaced (the table shows it deleted) is a problem.
func TestDoctorOnASubPathMount(t *testing.T) {
	path := filepath.Join(tempDir(t), "config.yaml")
	require.NoError(t, os.WriteFile(path, []byte("a: 1\n"), 0o644))
	table := filepath.Join(tempDir(t), "mountinfo")
	base, err := os.ReadFile("../../testdata/mountinfo-subpath")
	require.NoError(t, err)
	const root = "/var/lib/kubelet/pods/8c1f/volume-subpaths/cfg/app/0"
	line := "1600 1581 259:1 " + root + " " + path + " ro,relatime - ext4 /dev/nvme0n1p1 rw\n"
	require.NoError(t, os.WriteFile(table, append(base, line...), 0o644))

	stdout, _, code := runCmd(t, "doctor", "-mountinfo", table, path)
	t.Log("\n" + stdout)
	assert.Equal(t, 0, code)
	assert.Contains(t, stdout, "warn     file mount  "+path+" is a single file mounted on its own (from "+root+"): a Kubernetes subPath mount; "+
		"kubelet's updates of its ConfigMap or Secret replace the file, and never arrive")
	assert.Contains(t, stdout, "verdict: hot reload will work for edits in place only: a replacement of the mounted file does not arrive; mount the directory instead\n")

	line = strings.Replace(line, root, root+"//deleted", 1)
	require.NoError(t, os.WriteFile(table, append(base, line...), 0o644))
	stdout, _, code = runCmd(t, "doctor", "-mountinfo", table, path)
	t.Log("\n" + stdout)
	assert.Equal(t, 1, code)
	assert.Contains(t, stdout, "PROBLEM  file mount  "+path+" is a single file mounted on its own, and its source was replaced on the host side "+
		"(the mount table shows "+root+"//deleted): the mount keeps the old file")
	assert.Contains(t, stdout, "verdict: hot reload will NOT work")

	// The recorded pod's own subPath file, checked from its mount table.
	stdout, _, code = runCmd(t, "doctor", "-mountinfo", "../../testdata/mountinfo-subpath", "/etc/app/config.yaml")
	assert.Equal(t, 1, code, "the chain fails: this machine has no /etc/app")
	assert.Contains(t, stdout, "warn     file mount  /etc/app/config.yaml is a single file mounted on its own")

	// A directory mounted with a subPath, given as a set's directory, and
	// a file in it.
	dir := filepath.Join(tempDir(t), "conf.d")
	require.NoError(t, os.Mkdir(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.yaml"), []byte("a: 1\n"), 0o644))
	line = "1601 1581 259:1 /var/lib/kubelet/pods/8c1f/volume-subpaths/cfg/app/1 " + dir + " ro,relatime - ext4 /dev/nvme0n1p1 rw\n"
	require.NoError(t, os.WriteFile(table, append(base, line...), 0o644))
	for _, arg := range []string{dir, filepath.Join(dir, "a.yaml")} {
		stdout, _, code = runCmd(t, "doctor", "-mountinfo", table, arg)
		assert.Equal(t, 1, code, arg)
		assert.Contains(t, stdout, "PROBLEM  subPath     "+dir+" is a subPath mount of a directory (from /var/lib/kubelet/pods/8c1f/volume-subpaths/cfg/app/1)", arg)
	}
}

func TestDoctorOnBadPaths(t *testing.T) {
	dir := tempDir(t)
	stdout, _, code := runCmd(t, "doctor", filepath.Join(dir, "missing.yaml"))
	assert.Equal(t, 1, code)
	assert.Contains(t, stdout, "PROBLEM  chain       lstat "+filepath.Join(dir, "missing.yaml")+": no such file or directory")
	// The doctor agrees with the library: Watch fails there, as the stock
	// provider's does, unless the program gives WithWaitForPath.
	assert.Contains(t, stdout, "PROBLEM  watch       Watch fails now: watch "+filepath.Join(dir, "missing.yaml")+": no such file or directory (as koanf's stock provider's); with file.WithWaitForPath() it starts, and waits for the path")

	// With -wait, judged as a program giving WithWaitForPath: its Watch
	// starts and waits, so the missing path is a warning, file and set alike.
	for _, arg := range []string{filepath.Join(dir, "missing.yaml"), filepath.Join(dir, "conf.d") + "/"} {
		stdout, _, code = runCmd(t, "doctor", "-wait", arg)
		assert.Equal(t, 0, code, arg)
		assert.Contains(t, stdout, "warn     chain       lstat "+strings.TrimSuffix(arg, "/")+": no such file or directory: not there yet; with file.WithWaitForPath() the watch waits for it", arg)
		assert.NotContains(t, stdout, "PROBLEM", arg)
		assert.Contains(t, stdout, "verdict: hot reload will work with keepwatch", arg)
	}

	require.NoError(t, os.Symlink("loop", filepath.Join(dir, "loop")))
	stdout, _, code = runCmd(t, "doctor", filepath.Join(dir, "loop"))
	assert.Equal(t, 1, code)
	assert.Contains(t, stdout, "too many levels of symbolic links")
	assert.Contains(t, stdout, "PROBLEM  watch       Watch fails now: watch "+filepath.Join(dir, "loop")+": too many levels of symbolic links")
	stdout, _, code = runCmd(t, "doctor", "-wait", filepath.Join(dir, "loop"))
	assert.Equal(t, 1, code, "a loop is no path that is not there yet")
	assert.Contains(t, stdout, "PROBLEM  chain")

	// A loop of two links is printed once round, not as far as the
	// resolver went; no option is offered for it, as none gets past it.
	require.NoError(t, os.Symlink("b", filepath.Join(dir, "a")))
	require.NoError(t, os.Symlink("a", filepath.Join(dir, "b")))
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	stdout, _, code = runCmd(t, "doctor", a)
	assert.Equal(t, 1, code)
	assert.Contains(t, stdout, "         chain       "+a+" -> b\n"+
		"                     "+b+" -> a\n"+
		"                     "+a+" -> b again, and so on: a loop\n"+
		"PROBLEM  chain       resolve "+a+": too many levels of symbolic links: a symlink loop, which nothing the program can do gets past; fix the links\n"+
		"PROBLEM  watch       Watch fails now: watch "+a+": too many levels of symbolic links (as koanf's stock provider's); no option gets past a symlink loop\n")
	assert.NotContains(t, stdout, "WithWaitForPath")
	assert.Equal(t, 3, strings.Count(stdout, " -> "), "each link once, and the first again")

	// A ..data that points at itself is no kubelet volume, for a file and
	// a set alike.
	vol := filepath.Join(dir, "vol")
	require.NoError(t, os.Mkdir(vol, 0o755))
	require.NoError(t, os.Symlink("..data", filepath.Join(vol, "..data")))
	require.NoError(t, os.Symlink("..data/app.yaml", filepath.Join(vol, "app.yaml")))
	for _, arg := range []string{filepath.Join(vol, "app.yaml"), vol + "/"} {
		stdout, _, code = runCmd(t, "doctor", arg)
		assert.Equal(t, 1, code, arg)
		assert.Contains(t, stdout, "PROBLEM  layout      ..data -> ..data is a symlink loop, not a kubelet volume's link to its payload: nothing under it can be read\n", arg)
		assert.NotContains(t, stdout, "ok       layout", arg)
	}

	// A set's directory that is missing: Watch fails on it too.
	stdout, _, code = runCmd(t, "doctor", filepath.Join(dir, "conf.d")+"/")
	assert.Equal(t, 1, code)
	assert.Contains(t, stdout, "PROBLEM  watch       Watch fails now: watch "+filepath.Join(dir, "conf.d")+": no such file or directory")

	// A set's directory that is a file, and a set's name outside it.
	file := filepath.Join(dir, "app.yaml")
	require.NoError(t, os.WriteFile(file, []byte("a: 1\n"), 0o644))
	stdout, _, code = runCmd(t, "doctor", "-set", file, "a.yaml")
	assert.Equal(t, 1, code)
	assert.Contains(t, stdout, "PROBLEM  set         "+file+" is not a directory")
	assert.NotContains(t, stdout, "PROBLEM  watch", "the watch starts, and reports it")
	_, stderr, code := runCmd(t, "doctor", "-set", dir, "/etc/other/roles.yaml")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "/etc/other/roles.yaml is not in that directory")
}

// A FIFO, alone and as a set's member: the doctor says it is no regular
// file and ends, where it once opened it to ask the kernel about writers
// and waited for one for good.
func TestDoctorOnAFIFO(t *testing.T) {
	dir := tempDir(t)
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "app.yaml"), 0o644))
	for _, arg := range []string{filepath.Join(dir, "app.yaml"), dir + "/"} {
		stdout, code := runCmdWithin(t, time.Minute, "doctor", arg)
		assert.Equal(t, 1, code, arg)
		assert.Contains(t, stdout, "PROBLEM  file        "+filepath.Join(dir, "app.yaml")+" is not a regular file: nothing can be loaded from it", arg)
		assert.Contains(t, stdout, "verdict: hot reload will NOT work", arg)
	}
}

// runCmdWithin is runCmd for a command that must end within limit: it is
// killed after it, and the test fails.
func runCmdWithin(t *testing.T, limit time.Duration, args ...string) (stdout string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Stdout = &out
	err := cmd.Run()
	require.NoError(t, ctx.Err(), "keepwatch %s did not end within %v", strings.Join(args, " "), limit)
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return out.String(), exit.ExitCode()
	}
	require.NoError(t, err)
	return out.String(), 0
}

// kubeletSet makes a ConfigMap volume with two keys, as kubelet lays it
// out, and returns its directory, symlink-free (macOS's temporary
// directory is under a symlink).
func kubeletSet(t *testing.T) (*kubevol.Volume, string) {
	t.Helper()
	tmp, err := filepath.EvalSymlinks(tempDir(t))
	require.NoError(t, err)
	dir := filepath.Join(tmp, "authz")
	vol, err := kubevol.New(dir, map[string]string{
		"policy.yaml": "allow: [read]\n",
		"roles.yaml":  "roles: {alice: [read]}\n",
	})
	require.NoError(t, err)
	return vol, dir
}

// The directory given to file.Set or file.Glob: a kubelet volume, judged
// as the library reads it, each key's chain through ..data.
func TestDoctorOnAKubeletSetDirectory(t *testing.T) {
	vol, dir := kubeletSet(t)
	gen, err := vol.Generation()
	require.NoError(t, err)

	stdout, _, code := runCmd(t, "doctor", dir)
	t.Log("\n" + stdout)
	assert.Equal(t, 0, code)
	assert.Contains(t, stdout, dir+`: a directory, read as the set file.Glob("`+dir+`/*")`)
	assert.Contains(t, stdout, "ok       layout      kubelet volume (ConfigMap, Secret or projected): ..data -> "+gen)
	assert.Contains(t, stdout, "members     2 matching * (the files ..data holds, dotfiles left out), merged in this order: policy.yaml, roles.yaml")
	for _, key := range []string{"policy.yaml", "roles.yaml"} {
		assert.Contains(t, stdout, "         member      "+key+"\n"+
			"         chain       "+dir+"/"+key+" -> ..data/"+key+"\n"+
			"                     "+dir+"/..data -> "+gen+"\n"+
			"                     = "+dir+"/"+gen+"/"+key+"\n"+
			"ok       file        regular, ")
	}
	assert.Contains(t, stdout, "ok       set         reads as one: 2 files, 37 bytes in all (-max-size 16777216), from "+gen)
	assert.NotContains(t, stdout, "PROBLEM")
	assert.NotContains(t, stdout, "warn")
	assert.Contains(t, stdout, "verdict: hot reload will work\n")

	// The same keys named, as file.Set names them.
	stdout, _, code = runCmd(t, "doctor", "-set", dir, "roles.yaml", "policy.yaml")
	assert.Equal(t, 0, code)
	assert.Contains(t, stdout, "keepwatch doctor -set "+dir+" roles.yaml policy.yaml\n\n"+dir+`: the set file.Set("`+dir+`", []string{"roles.yaml", "policy.yaml"})`)
	assert.Contains(t, stdout, "members     2 named, merged in this order: roles.yaml, policy.yaml")
	assert.Contains(t, stdout, "chain       "+dir+"/roles.yaml -> ..data/roles.yaml")
	assert.Contains(t, stdout, "verdict: hot reload will work\n")

	// A key the ConfigMap does not have stops the set.
	stdout, _, code = runCmd(t, "doctor", "-set", dir, "policy.yaml", "users.yaml")
	assert.Equal(t, 1, code)
	assert.Contains(t, stdout, "PROBLEM  chain       lstat "+dir+"/"+gen+"/users.yaml: no such file or directory")
	assert.Contains(t, stdout, "PROBLEM  members     the volume has no key users.yaml: its keys are policy.yaml, roles.yaml")
	assert.Contains(t, stdout, "PROBLEM  watch       Watch fails now: watch "+dir+"/users.yaml: no such file or directory")
	assert.Contains(t, stdout, "verdict: hot reload will NOT work")

	// A file put into the volume by hand is not in the payload: not read.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "extra.yaml"), []byte("x: 1\n"), 0o644))
	stdout, _, code = runCmd(t, "doctor", dir)
	assert.Equal(t, 0, code)
	assert.Contains(t, stdout, "warn     members     not in the payload ..data leads to, so not read: extra.yaml")
}

// A conf.d directory outside any kubelet volume, whole and by a glob.
func TestDoctorOnAConfDirectoryAndAGlob(t *testing.T) {
	dir := filepath.Join(tempDir(t), "conf.d")
	require.NoError(t, os.Mkdir(dir, 0o755))
	for name, data := range map[string]string{"10-base.yaml": "a: 1\n", "20-site.yaml": "b: 2\n", ".20-site.yaml.swp": "x", "README": "notes\n"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644))
	}

	stdout, _, code := runCmd(t, "doctor", dir)
	t.Log("\n" + stdout)
	assert.Equal(t, 0, code)
	assert.Contains(t, stdout, "         layout      not a kubelet volume (no ..data link in "+dir+")")
	assert.Contains(t, stdout, "members     3 matching * (dotfiles left out), merged in this order: 10-base.yaml, 20-site.yaml, README")
	assert.Contains(t, stdout, "member      README\n         chain       no symlinks: "+dir+"/README\nok       file        regular, 6 bytes, readable")
	assert.Contains(t, stdout, "ok       set         reads as one: 3 files, 16 bytes in all")
	assert.NotContains(t, stdout, ".swp")
	assert.Contains(t, stdout, "verdict: hot reload will work\n")

	glob := filepath.Join(dir, "*.yaml")
	stdout, _, code = runCmd(t, "doctor", glob)
	t.Log("\n" + stdout)
	assert.Equal(t, 0, code)
	assert.Contains(t, stdout, glob+`: a glob, read as the set file.Glob("`+glob+`")`)
	assert.Contains(t, stdout, "members     2 matching *.yaml (dotfiles left out), merged in this order: 10-base.yaml, 20-site.yaml")
	assert.NotContains(t, stdout, "README")

	// A subdirectory matches the directory's glob, but a set is files:
	// the library leaves it out, and so does the doctor.
	require.NoError(t, os.Mkdir(filepath.Join(dir, "old"), 0o755))
	stdout, _, code = runCmd(t, "doctor", dir)
	assert.Equal(t, 0, code, "the subdirectory is no member:\n%s", stdout)
	assert.Contains(t, stdout, "members     3 matching * (dotfiles left out), merged in this order: 10-base.yaml, 20-site.yaml, README")
	assert.NotContains(t, stdout, filepath.Join(dir, "old"))

	// Nothing matches: an empty set, said so.
	stdout, _, code = runCmd(t, "doctor", filepath.Join(dir, "*.json"))
	assert.Equal(t, 0, code)
	assert.Contains(t, stdout, "warn     members     no file matches *.json: the set is empty until one appears")
}

// Several paths: each judged as the library reads it, the limits once,
// one verdict naming where the problems are.
func TestDoctorOnSeveralPaths(t *testing.T) {
	_, set := kubeletSet(t)
	file := filepath.Join(tempDir(t), "app.yaml")
	require.NoError(t, os.WriteFile(file, []byte("a: 1\n"), 0o644))
	missing := filepath.Join(tempDir(t), "gone.yaml")

	stdout, _, code := runCmd(t, "doctor", file, set, filepath.Join(set, "*.yaml"), missing)
	t.Log("\n" + stdout)
	assert.Equal(t, 1, code)
	assert.Contains(t, stdout, "\n"+file+`: a file, read as file.Provider("`+file+`")`+"\n         chain       no symlinks: "+file+"\nok       file        regular, 5 bytes")
	assert.Contains(t, stdout, "\n"+set+": a directory, read as the set")
	assert.Contains(t, stdout, "\n"+filepath.Join(set, "*.yaml")+": a glob, read as the set")
	assert.Equal(t, 2, strings.Count(stdout, "ok       layout      kubelet volume"), "the set and its glob")
	assert.Contains(t, stdout, "\n"+missing+": a file")
	if runtime.GOOS == "linux" {
		assert.Equal(t, 1, strings.Count(stdout, "limits      uid"))
	}
	assert.Contains(t, stdout, "verdict: hot reload will NOT work until the problems above are fixed (in "+missing+")")

	stdout, _, code = runCmd(t, "doctor", file, set)
	assert.Equal(t, 0, code)
	assert.Contains(t, stdout, "verdict: hot reload will work\n")
}

// watching is a keepwatch watch running until the test stops it.
type watching struct {
	cmd  *exec.Cmd
	out  *lines
	done chan struct{} // closed once its output is read to the end
}

func startWatch(t *testing.T, args ...string) *watching {
	t.Helper()
	w := &watching{cmd: exec.Command(binary, append([]string{"watch"}, args...)...), out: &lines{}, done: make(chan struct{})}
	stdout, err := w.cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, w.cmd.Start())
	go func() { defer close(w.done); w.out.read(stdout) }()
	t.Cleanup(func() { _ = w.cmd.Process.Kill(); <-w.done; _ = w.cmd.Wait() })
	return w
}

// stop interrupts the watch, as ^C does, and waits for its last line.
func (w *watching) stop(t *testing.T) {
	t.Helper()
	require.NoError(t, w.cmd.Process.Signal(syscall.SIGINT))
	<-w.done
	require.NoError(t, w.cmd.Wait(), "an interrupt is the normal end")
	t.Log("\n" + w.out.String())
}

func TestWatchPrintsEachUpdateAndProblem(t *testing.T) {
	dir, err := filepath.EvalSymlinks(tempDir(t)) // macOS's is under a symlink
	require.NoError(t, err)
	path := filepath.Join(dir, "config.yaml")
	write := func(data string) {
		require.NoError(t, os.WriteFile(path+".tmp", []byte(data), 0o644))
		require.NoError(t, os.Rename(path+".tmp", path))
	}
	write("a: 1\nb: 2\n")

	w := startWatch(t, path)
	out := w.out
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

	w.stop(t)
	out.wait(t, n, "stopped", "updates=4", "problems=1")
	assert.Equal(t, 1, out.count(" problem "))
}

// A file missing when the watch starts, with -wait: the first read fails,
// and the watch reports the problem when it starts. It is printed once, not
// once for each.
func TestWatchReportsAProblemOnce(t *testing.T) {
	dir, err := filepath.EvalSymlinks(tempDir(t))
	require.NoError(t, err)
	path := filepath.Join(dir, "config.yaml")
	set := filepath.Join(dir, "conf.d")

	w := startWatch(t, "-wait", path, set+"/")
	n := w.out.wait(t, 0, "problem", path+" open "+path+": no such file or directory")
	w.out.wait(t, 0, "problem", set+"/ lstat "+set+": no such file or directory")
	require.NoError(t, os.WriteFile(path, []byte("a: 1\n"), 0o644))
	w.out.wait(t, n+1, "update", path+" op=CREATE", "size=5", "keys=1")
	require.NoError(t, os.Mkdir(set, 0o755))
	w.out.wait(t, n+1, "update", set+"/ op=CREATE", "files=0")

	w.stop(t)
	assert.Equal(t, 2, w.out.count(" problem "), "one for each")
	assert.Equal(t, 0, w.out.count(" loaded "), "nothing was")
	w.out.wait(t, 0, "stopped", path+" updates=1 restarts=0 problems=1")
}

// Without -wait, watch agrees with the library: a PATH that does not
// resolve fails, as Watch does in a program.
func TestWatchOnAMissingPathFailsWithoutWait(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	for _, arg := range []string{filepath.Join(dir, "config.yaml"), filepath.Join(dir, "conf.d") + "/"} {
		_, stderr, code := runCmd(t, "watch", arg)
		assert.Equal(t, 1, code)
		assert.Contains(t, stderr, "keepwatch: watch "+filepath.Clean(arg)+": no such file or directory (Watch fails")
		assert.Contains(t, stderr, "-wait waits for it")
	}
}

// The directory given to file.Glob, in a kubelet volume: one line for
// each kubelet update, none for an update that changes nothing, the files
// and the generation each was read from.
func TestWatchASetThroughKubeletUpdates(t *testing.T) {
	vol, dir := kubeletSet(t)
	payload := map[string]string{"policy.yaml": "allow: [read]\n", "roles.yaml": "roles: {alice: [read]}\n"}

	w := startWatch(t, dir)
	gen, err := vol.Generation()
	require.NoError(t, err)
	w.out.wait(t, 0, "loaded", "files=policy.yaml,roles.yaml", "size=37", "generation="+gen, "keys=2")
	n := w.out.wait(t, 0, "watching", "mode=events", dir+","+dir+"/"+gen)

	update := func(parts ...string) {
		t.Helper()
		changed, err := vol.Update(payload)
		require.NoError(t, err)
		require.True(t, changed)
		gen, err := vol.Generation()
		require.NoError(t, err)
		n = w.out.wait(t, n+1, append([]string{"update", "op=WRITE", "generation=" + gen}, parts...)...)
	}
	payload["policy.yaml"] = "allow: [read, write]\n"
	update("reason=event", "files=2 ", "keys=~allow")
	changed, err := vol.Update(payload) // as kubelet: the same payload writes nothing
	require.NoError(t, err)
	require.False(t, changed)
	payload["limits.yaml"] = "limits: {rps: 10}\n"
	update("files=3(+limits.yaml)", "keys=+limits")
	delete(payload, "roles.yaml")
	update("files=2(-roles.yaml)", "keys=-roles")
	payload["limits.yaml"] = "limits: {rps: [\n"
	update("files=2 ", "keys=unparsable: parse "+dir+"/limits.yaml: yaml:")

	w.stop(t)
	assert.Equal(t, 4, w.out.count(" update "), "one for each update that changed the payload")
	assert.Equal(t, 0, w.out.count(" problem "))
	w.out.wait(t, n, "stopped", "updates=4 restarts=0 problems=0")
}

// The keys of one ConfigMap read as one file.Set: a key the ConfigMap
// drops is a problem of the set, reported once however many updates keep
// it missing; the set is delivered again once the key is back.
func TestWatchASetReportsAProblemOnce(t *testing.T) {
	vol, dir := kubeletSet(t)
	w := startWatch(t, "-set", dir, "policy.yaml", "roles.yaml")
	w.out.wait(t, 0, "loaded", "files=policy.yaml,roles.yaml", "keys=2")
	n := w.out.wait(t, 0, "watching", "mode=events")

	_, err := vol.Update(map[string]string{"policy.yaml": "allow: [read]\n"})
	require.NoError(t, err)
	n = w.out.wait(t, n+1, "problem", "open "+dir+"/roles.yaml: no such file or directory")
	// Another update, the key still missing: the same problem, not again.
	_, err = vol.Update(map[string]string{"policy.yaml": "allow: []\n"})
	require.NoError(t, err)
	_, err = vol.Update(map[string]string{"policy.yaml": "allow: [read, write]\n", "roles.yaml": "roles: {bob: [read]}\n"})
	require.NoError(t, err)
	n = w.out.wait(t, n+1, "update", "op=CREATE", "files=2 ", "keys=~allow,~roles")

	w.stop(t)
	assert.Equal(t, 1, w.out.count(" problem "))
	assert.Equal(t, 1, w.out.count(" update "))
	w.out.wait(t, n, "stopped", "updates=1 restarts=0 problems=1")
}

// Several paths, each watched on its own, each line naming its path.
func TestWatchSeveralPaths(t *testing.T) {
	tmp, err := filepath.EvalSymlinks(tempDir(t))
	require.NoError(t, err)
	file := filepath.Join(tmp, "app.yaml")
	require.NoError(t, os.WriteFile(file, []byte("a: 1\n"), 0o644))
	dir := filepath.Join(tmp, "conf.d")
	require.NoError(t, os.Mkdir(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "10-a.yaml"), []byte("a: 1\n"), 0o644))
	replace := func(path, data string) {
		require.NoError(t, os.WriteFile(filepath.Join(tmp, ".tmp"), []byte(data), 0o644))
		require.NoError(t, os.Rename(filepath.Join(tmp, ".tmp"), path))
	}

	w := startWatch(t, file, dir)
	w.out.wait(t, 0, "loaded", file+" size=5")
	w.out.wait(t, 0, "loaded", dir+" files=10-a.yaml size=5")
	w.out.wait(t, 0, "watching", file+" mode=events")
	n := w.out.wait(t, 0, "watching", dir+" mode=events")

	replace(file, "a: 2\n")
	w.out.wait(t, n+1, "update", file+" op=WRITE", "keys=~a")
	replace(filepath.Join(dir, "20-b.yaml"), "b: 1\n")
	w.out.wait(t, n+1, "update", dir+" op=WRITE", "files=2(+20-b.yaml)", "keys=+b")
	require.NoError(t, os.Rename(dir, dir+".old"))
	w.out.wait(t, n+1, "problem", dir+" lstat "+dir+": no such file or directory")
	require.NoError(t, os.Rename(dir+".old", dir))
	w.out.wait(t, n+1, "update", dir+" op=CREATE", "files=2 ", "keys=unchanged")

	w.stop(t)
	assert.Equal(t, 1, w.out.count(" problem "))
	w.out.wait(t, n, "stopped", file+" updates=1 restarts=0 problems=0")
	w.out.wait(t, n, "stopped", dir+" updates=2 restarts=0 problems=1")
}

// tempDir is a temporary directory that every user may enter, as the
// directories of a pod's volumes are: the doctor, run as root, warns of a
// directory only root may enter (t.TempDir's parent is 0700).
func tempDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{filepath.Dir(dir), dir} {
		require.NoError(t, os.Chmod(d, 0o755))
	}
	return dir
}
