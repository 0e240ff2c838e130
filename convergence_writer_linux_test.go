package file

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"

	"github.com/keepwatch/file/internal/writers"
	"github.com/stretchr/testify/require"
)

// The soak as a user who does not own the files (issue 42): the test both
// writes and watches them, so the writing is done as another user on the
// writing goroutine's thread alone (its fsuid and fsgid), and the watch,
// on the other threads, is root's. Run as root without CAP_LEASE, the
// kernel then does not answer the watch's question on the files:
//
//	setpriv --bounding-set=-lease go test -run TestConvergence . -args -convergence.soak=3m -convergence.writer-uid=65534
var convWriterUID = flag.Int("convergence.writer-uid", -1, "write each sequence's files as this uid and gid, on its own thread (root without CAP_LEASE: the watch does not own them)")

// writeAsOther makes the rest of the sequence on this goroutine write as
// -convergence.writer-uid, if it is set, and checks that the kernel
// refuses the question on a file so written. The thread stays the
// goroutine's and ends with it (no UnlockOSThread), so no other goroutine
// ever runs as that user; Go makes its new threads from a clean template
// thread, not from a locked one.
func writeAsOther(t *testing.T) {
	uid := *convWriterUID
	if uid < 0 {
		return
	}
	runtime.LockOSThread()
	require.NoError(t, syscall.Setfsgid(uid))
	require.NoError(t, syscall.Setfsuid(uid))
	path := filepath.Join(t.TempDir(), "owned")
	require.NoError(t, os.WriteFile(path, nil, 0o644))
	info, err := os.Stat(path)
	require.NoError(t, err)
	require.EqualValues(t, uid, info.Sys().(*syscall.Stat_t).Uid, "the sequence's files are not the writer's")
	asked := make(chan error)
	go func() { asked <- askAsWatch(path) }() // another thread: root's
	if err := <-asked; !errors.Is(err, syscall.EACCES) {
		t.Fatalf("the kernel's answer to the watch on a file of uid %d: %v, want EACCES (run without CAP_LEASE: setpriv --bounding-set=-lease)", uid, err)
	}
}

func askAsWatch(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = writers.On(int(f.Fd()), 0)
	return err
}
