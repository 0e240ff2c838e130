// Package fuse_test puts keepwatch on a FUSE mount whose server changes the
// file itself, as the remote side of NFS, SMB, sshfs or a FUSE config
// store does: the kernel reports to inotify only the changes made through
// it, so no event ever tells of this one. It is a module of its own so
// that go-fuse never enters keepwatch's go.mod.
package fuse_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/keepwatch/file"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// waitFor is how long a test waits for a change to be delivered: generous,
// so that a loaded machine never fails a correct test; where events cannot
// be had, keepwatch delivers within seconds.
const waitFor = 10 * time.Second

// A change made by the FUSE server, with keepwatch's default options, is
// delivered within seconds: the content changed in place (same size, new
// modification time), then grown.
func TestAChangeTheFUSEServerMakesIsDeliveredWithinSeconds(t *testing.T) {
	if !inMountNamespace(t) {
		return
	}
	cfg := &memFile{}
	cfg.set("v: 1\n")
	path := filepath.Join(mount(t, cfg), "config.yaml")
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, "v: 1\n", string(b), "the mount serves the file")

	f := file.Provider(path, file.WithLogger(slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	r := &recorder{f: f}
	_, err = f.ReadBytes()
	require.NoError(t, err)
	require.NoError(t, f.Watch(r.cb))
	defer shutdown(t, f)
	t.Logf("watching, mode %s", f.Stats().Mode)

	for _, want := range []string{"v: 2\n", "v: 3, grown\n"} {
		changed := time.Now()
		cfg.set(want)
		require.Eventually(t, func() bool { return r.last() == want }, waitFor, 2*time.Millisecond,
			"the server's change to %q not delivered in %v with the default options; mode %s, got %q",
			want, waitFor, f.Stats().Mode, r.contents())
		t.Logf("the FUSE server's change to %q: delivered %v after it (mode %s)",
			want, r.lastAt().Sub(changed).Round(time.Millisecond), f.Stats().Mode)
	}
	assert.Equal(t, []string{"v: 2\n", "v: 3, grown\n"}, r.contents())
}

// A file the FUSE server writes a piece at a time, as a remote writer does,
// is never delivered half written: the kernel of this host cannot say who
// writes a FUSE file (it would grant the lease whatever the server does),
// so the watch is not to take its word, and waits for the file to go quiet.
// A piece that came later than the quiet window after the one before is
// the documented limit, and is only logged.
func TestAFileTheFUSEServerWritesInPiecesIsNeverDeliveredHalfDone(t *testing.T) {
	if !inMountNamespace(t) {
		return
	}
	cfg := &memFile{}
	cfg.set("v: 1\n")
	path := filepath.Join(mount(t, cfg), "config.yaml")
	f := file.Provider(path, file.WithPolling(20*time.Millisecond))
	r := &recorder{f: f}
	require.NoError(t, f.Watch(r.cb))
	defer shutdown(t, f)

	const quiet = 100 * time.Millisecond // the default quiet window
	var slowest time.Duration
	for round := range 3 {
		var b strings.Builder
		fmt.Fprintf(&b, "round: %d\n", round)
		last := time.Now()
		for range 6 {
			b.WriteString("line\n")
			cfg.set(b.String())
			time.Sleep(40 * time.Millisecond) // two polls, within the window
			slowest = max(slowest, time.Since(last))
			last = time.Now()
		}
		b.WriteString("end\n")
		cfg.set(b.String())
		want := b.String()
		require.Eventually(t, func() bool { return r.last() == want }, waitFor, 2*time.Millisecond,
			"round %d not delivered; got %q", round, r.contents())
	}
	for i, c := range r.contents() {
		if strings.HasSuffix(c, "end\n") {
			continue
		}
		if slowest >= quiet {
			t.Logf("delivery %d is half done, after a piece %v late: the documented limit", i, slowest)
			continue
		}
		t.Errorf("delivery %d is half done (%q); the slowest piece came %v after the one before", i, c, slowest)
	}
	if slowest < quiet {
		assert.Len(t, r.contents(), 3, "one delivery a round: %q", r.contents())
	}
}

// memFile is the one file of the in-memory filesystem: its content is what
// the server says, changed by set, which no inotify watch sees.
type memFile struct {
	fs.Inode
	mu    sync.Mutex
	data  []byte
	mtime time.Time
}

var (
	_ fs.NodeGetattrer = (*memFile)(nil)
	_ fs.NodeOpener    = (*memFile)(nil)
	_ fs.NodeReader    = (*memFile)(nil)
)

// set changes the content, as the remote side would, with a new
// modification time.
func (f *memFile) set(data string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.data = []byte(data)
	f.mtime = time.Now()
}

func (f *memFile) Getattr(_ context.Context, _ fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	f.mu.Lock()
	defer f.mu.Unlock()
	out.Mode = syscall.S_IFREG | 0o644
	out.Size = uint64(len(f.data))
	out.SetTimes(nil, &f.mtime, &f.mtime)
	return 0
}

// Open serves reads straight from the server, never from the page cache.
func (f *memFile) Open(context.Context, uint32) (fs.FileHandle, uint32, syscall.Errno) {
	return nil, fuse.FOPEN_DIRECT_IO, 0
}

func (f *memFile) Read(_ context.Context, _ fs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	f.mu.Lock()
	defer f.mu.Unlock()
	end := min(off+int64(len(dest)), int64(len(f.data)))
	if off >= end {
		return fuse.ReadResultData(nil), 0
	}
	return fuse.ReadResultData(bytes.Clone(f.data[off:end])), 0
}

// mount serves a filesystem holding config.yaml, which is file, on a
// temporary directory, and returns the directory. The kernel caches
// neither entries nor attributes, as network filesystems revalidate them.
// The mount goes when the test ends. It skips the test where the kernel
// refuses it.
func mount(t *testing.T, cfg *memFile) string {
	t.Helper()
	dir := t.TempDir()
	root := &fs.Inode{}
	zero := time.Duration(0)
	server, err := fs.Mount(dir, root, &fs.Options{
		MountOptions: fuse.MountOptions{DirectMount: true, FsName: "keepwatch-test", Name: "memfs"},
		EntryTimeout: &zero, AttrTimeout: &zero, NegativeTimeout: &zero,
		OnAdd: func(ctx context.Context) {
			root.AddChild("config.yaml", root.NewPersistentInode(ctx, cfg, fs.StableAttr{Mode: syscall.S_IFREG}), false)
		},
	})
	if err != nil {
		t.Skipf("FUSE mount refused: %v", err)
	}
	t.Cleanup(func() {
		if err := server.Unmount(); err != nil {
			t.Errorf("unmount: %v", err)
		}
		server.Wait()
	})
	return dir
}

// The test runs again in a child process with a mount namespace of its
// own, so that its mount can never outlive it, even if it crashes.
const childEnv = "KEEPWATCH_FUSE_CHILD"

// inMountNamespace returns true in the child, which goes on with the test;
// in the parent it runs the child, passes its result on (a skip as a
// skip), and returns false. It skips where FUSE cannot be had.
func inMountNamespace(t *testing.T) bool {
	t.Helper()
	if os.Getenv(childEnv) == t.Name() {
		return true
	}
	if os.Geteuid() != 0 {
		t.Skip("mounting needs root")
	}
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skipf("no FUSE here: %v", err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), childEnv+"="+t.Name())
	cmd.SysProcAttr = &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS}
	out, err := cmd.CombinedOutput()
	t.Logf("child:\n\t%s", strings.ReplaceAll(strings.TrimRight(string(out), "\n"), "\n", "\n\t"))
	if err != nil && strings.Contains(err.Error(), "operation not permitted") {
		t.Skipf("no mount namespace here: %v", err)
	}
	require.NoError(t, err, "the child failed")
	if strings.Contains(string(out), "--- SKIP: "+t.Name()) {
		t.Skip("the child skipped")
	}
	require.Contains(t, string(out), "--- PASS: "+t.Name(), "the child ran the test")
	return false
}

// recorder is a watch callback that reads the file inside the callback, as
// a koanf user does, and keeps every content it got.
type recorder struct {
	f   *file.File
	mu  sync.Mutex
	got []string
	at  time.Time
}

// With the default options keepwatch calls back with news only, never with
// an error.
func (r *recorder) cb(event any, _ error) {
	_ = event.(fsnotify.Event)
	data, err := r.f.ReadBytes()
	if err != nil {
		data = []byte("ReadBytes in the callback: " + err.Error())
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, string(data))
	r.at = time.Now()
}

func (r *recorder) contents() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.got...)
}

func (r *recorder) last() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.got) == 0 {
		return ""
	}
	return r.got[len(r.got)-1]
}

func (r *recorder) lastAt() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.at
}

func shutdown(t *testing.T, f *file.File) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	require.NoError(t, f.Shutdown(ctx))
}

// testWriter sends the provider's log to the test's log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(string(bytes.TrimRight(p, "\n")))
	return len(p), nil
}
