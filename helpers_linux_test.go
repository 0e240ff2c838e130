package file

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
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

// nobodysTempDir is a temporary directory the user nobody may enter, with
// its parent: t.TempDir makes them 0700.
func nobodysTempDir(t *testing.T) string {
	t.Helper()
	base := t.TempDir()
	require.NoError(t, os.Chmod(filepath.Dir(base), 0o755))
	require.NoError(t, os.Chmod(base, 0o755))
	return base
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
// test if the child fails.
func runChild(t *testing.T, attr *syscall.SysProcAttr, env ...string) {
	t.Helper()
	// The child is a process of its own, with its own hub, limits and
	// mounts; the parent only waits for it, so it waits beside others.
	t.Parallel()
	cmd := childCommand(t, attr, env...)
	out, err := cmd.CombinedOutput()
	t.Logf("child:\n%s", indent(string(out)))
	require.NoError(t, err, "the child failed")
	require.Contains(t, string(out), "--- PASS: "+t.Name(), "the child ran the test")
}

// childCommand is the command that runs this one test in a child, with
// attr and env. The binary is copied where anyone may run it.
func childCommand(t *testing.T, attr *syscall.SysProcAttr, env ...string) *exec.Cmd {
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
	return cmd
}

// copyFile copies from to to, a binary about to be run. No process may be
// forked while to is open for writing: a child forked then holds the
// descriptor until it execs, and running to meanwhile fails with "text
// file busy" (ETXTBSY; golang.org/issue/22315), which tests starting
// children in parallel hit. Forks take syscall.ForkLock for writing.
func copyFile(t *testing.T, from, to string) {
	t.Helper()
	src, err := os.Open(from)
	require.NoError(t, err)
	defer src.Close()
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	dst, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o755)
	require.NoError(t, err)
	_, err = io.Copy(dst, src)
	require.NoError(t, err)
	require.NoError(t, dst.Close())
}

func indent(s string) string {
	return "\t" + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n\t")
}

// A child that talks with its parent while both run, for tests where the
// parent changes the world (as root) and the child, set up otherwise (as
// another user), watches it: the child reports each step it reaches, and
// waits for the parent's word before the next. Reports go over the child's
// fd 3, the parent's word over its fd 4, one line each.

const (
	childReportFD = 3
	childListenFD = 4
)

// liveChild is the parent's side of a child started by startChild.
type liveChild struct {
	cmd     *exec.Cmd
	to      *os.File      // the child's fd 4
	reports chan string   // the child's fd 3, line by line; closed at EOF
	read    chan struct{} // closed when the goroutine reading reports ends
	out     *lockedBuffer // the child's stdout and stderr
	exited  chan struct{} // closed when the child has exited
	err     error         // its exit, once exited is closed
	done    bool          // finish has run
}

// startChild starts the test again in a child process with attr and env,
// as runChild does, but returns at once: the parent goes on with the test
// and talks with the child through await and tell, then waits for its
// result with wait. The child is killed if the test ends first.
func startChild(t *testing.T, attr *syscall.SysProcAttr, env ...string) *liveChild {
	t.Helper()
	cmd := childCommand(t, attr, env...)
	reportR, reportW, err := os.Pipe()
	require.NoError(t, err)
	listenR, listenW, err := os.Pipe()
	if err != nil {
		reportR.Close()
		reportW.Close()
		require.NoError(t, err)
	}
	c := &liveChild{
		cmd:     cmd,
		to:      listenW,
		reports: make(chan string, 16),
		read:    make(chan struct{}),
		out:     &lockedBuffer{},
		exited:  make(chan struct{}),
	}
	c.cmd.Stdout, c.cmd.Stderr = c.out, c.out
	c.cmd.ExtraFiles = []*os.File{reportW, listenR} // fds 3 and 4
	err = c.cmd.Start()
	reportW.Close()
	listenR.Close()
	if err != nil {
		reportR.Close()
		listenW.Close()
		require.NoError(t, err)
	}
	go func() {
		defer close(c.read)
		defer close(c.reports)
		defer reportR.Close()
		s := bufio.NewScanner(reportR)
		for s.Scan() {
			c.reports <- s.Text()
		}
	}()
	go func() {
		c.err = c.cmd.Wait()
		close(c.exited)
	}()
	t.Cleanup(func() {
		if !c.done {
			_ = c.cmd.Process.Kill()
			c.finish()
			t.Logf("child (killed):\n%s", indent(c.out.String()))
		}
	})
	return c
}

// finish closes the parent's end and waits for the child and the reader.
func (c *liveChild) finish() {
	c.done = true
	c.to.Close()
	<-c.exited
	for range c.reports { // the reader ends at EOF; let it
	}
	<-c.read
}

// await waits until the child reports step; it fails the test if the child
// ends or says something else first.
func (c *liveChild) await(t *testing.T, step string) {
	t.Helper()
	select {
	case got, ok := <-c.reports:
		if !ok {
			c.failed(t, "the child ended before reporting %q", step)
		}
		if got != step {
			c.failed(t, "the child reported %q, not %q", got, step)
		}
	case <-time.After(waitFor):
		c.failed(t, "the child never reported %q", step)
	}
}

func (c *liveChild) failed(t *testing.T, format string, args ...any) {
	t.Helper()
	_ = c.cmd.Process.Kill()
	c.finish()
	t.Logf("child:\n%s", indent(c.out.String()))
	t.Fatalf(format, args...)
}

// tell gives the child the word step, followed by args on the line.
func (c *liveChild) tell(t *testing.T, step string, args ...string) {
	t.Helper()
	_, err := io.WriteString(c.to, strings.Join(append([]string{step}, args...), " ")+"\n")
	require.NoError(t, err, "telling the child %q", step)
}

// wait waits for the child to end and fails the test if it failed.
func (c *liveChild) wait(t *testing.T) {
	t.Helper()
	timeout := time.After(2 * waitFor)
	select {
	case <-c.exited:
	case <-timeout:
		c.failed(t, "the child did not end")
	}
	c.finish()
	out := c.out.String()
	t.Logf("child:\n%s", indent(out))
	require.NoError(t, c.err, "the child failed")
	require.Contains(t, out, "--- PASS: "+t.Name(), "the child ran the test")
}

var parentLink struct {
	once   sync.Once
	report *os.File
	listen *os.File
	lines  *bufio.Reader
}

func linkToParent(t *testing.T) {
	t.Helper()
	parentLink.once.Do(func() {
		require.NoError(t, unix.SetNonblock(childListenFD, true))
		parentLink.report = os.NewFile(childReportFD, "report")
		parentLink.listen = os.NewFile(childListenFD, "listen")
		parentLink.lines = bufio.NewReader(parentLink.listen)
	})
}

// report tells the parent, from the child, that it reached step.
func report(t *testing.T, step string) {
	t.Helper()
	linkToParent(t)
	_, err := io.WriteString(parentLink.report, step+"\n")
	require.NoError(t, err, "reporting %q", step)
}

// awaitParent waits, in the child, for the parent's word step, and returns
// what the parent said after it on the line.
func awaitParent(t *testing.T, step string) string {
	t.Helper()
	linkToParent(t)
	require.NoError(t, parentLink.listen.SetReadDeadline(time.Now().Add(2*waitFor)))
	line, err := parentLink.lines.ReadString('\n')
	require.NoError(t, err, "waiting for the parent's %q", step)
	word, rest, _ := strings.Cut(strings.TrimSuffix(line, "\n"), " ")
	require.Equal(t, step, word, "the parent's word")
	return rest
}

// Limits a child process may put on itself, which a test process must not.

// exhaustDescriptors lowers this process's soft RLIMIT_NOFILE to its lowest
// free descriptor, so that the next open fails with EMFILE while every
// descriptor already open goes on working, and returns what puts the limit
// back (once, however often it is called). Only for a child: other tests
// would fail meanwhile.
func exhaustDescriptors(t *testing.T) (restore func()) {
	t.Helper()
	var was unix.Rlimit
	require.NoError(t, unix.Getrlimit(unix.RLIMIT_NOFILE, &was))
	probe, err := os.Open(os.DevNull) // the lowest free descriptor
	require.NoError(t, err)
	lowest := probe.Fd()
	require.NoError(t, probe.Close())
	lowered := unix.Rlimit{Cur: uint64(lowest), Max: was.Max}
	require.NoError(t, unix.Setrlimit(unix.RLIMIT_NOFILE, &lowered))
	_, err = os.Open(os.DevNull)
	require.ErrorIs(t, err, syscall.EMFILE, "with the limit at %d, an open fails", lowest)
	var once sync.Once
	return func() { once.Do(func() { require.NoError(t, unix.Setrlimit(unix.RLIMIT_NOFILE, &was)) }) }
}

// blockInotify makes inotify_init1 and inotify_init fail with ENOSYS in
// this process from now on, on every thread, as sandboxes that do not
// offer inotify (gVisor-like runtimes) do: a seccomp filter, which cannot
// be undone. Only for a child.
func blockInotify(t *testing.T) {
	t.Helper()
	arch, ok := map[string]uint32{"amd64": unix.AUDIT_ARCH_X86_64, "arm64": unix.AUDIT_ARCH_AARCH64}[runtime.GOARCH]
	if !ok {
		t.Skipf("no seccomp filter written for %s", runtime.GOARCH)
	}
	blocked := []uint32{unix.SYS_INOTIFY_INIT1}
	if runtime.GOARCH == "amd64" {
		blocked = append(blocked, 253) // inotify_init, which arm64 does not have
	}
	const (
		ldAbs = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq   = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		ret   = unix.BPF_RET | unix.BPF_K
		// offsets in struct seccomp_data
		nrOffset, archOffset = 0, 4
	)
	// Another architecture's call numbers name other calls: those pass.
	prog := []unix.SockFilter{
		{Code: ldAbs, K: archOffset},
		{Code: jeq, K: arch, Jt: 0, Jf: uint8(len(blocked) + 1)}, // to ALLOW
		{Code: ldAbs, K: nrOffset},
	}
	for i, nr := range blocked {
		// A match jumps past the other tests and ALLOW, to ERRNO.
		prog = append(prog, unix.SockFilter{Code: jeq, K: nr, Jt: uint8(len(blocked) - i)})
	}
	prog = append(prog,
		unix.SockFilter{Code: ret, K: unix.SECCOMP_RET_ALLOW},
		unix.SockFilter{Code: ret, K: unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)},
	)
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}

	// no_new_privs and the filter on this thread; TSYNC gives both to every
	// other thread of the process.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	require.NoError(t, unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
	thread, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER,
		unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&fprog)))
	runtime.KeepAlive(prog)
	require.Zero(t, errno, "seccomp: %v", errno)
	require.Zero(t, thread, "seccomp: thread %d could not take the filter", thread)

	_, err := unix.InotifyInit1(unix.IN_CLOEXEC)
	require.ErrorIs(t, err, unix.ENOSYS, "inotify_init1 is blocked")
}
