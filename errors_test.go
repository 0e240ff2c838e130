package file

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall"
	"testing"

	"github.com/fsnotify/fsnotify"
	"github.com/keepwatch/file/internal/osfile"
	"github.com/stretchr/testify/assert"
)

// A problem is known by its kind and root cause, not by the text around it.
func TestProblemsAreKnownByKindAndRootCause(t *testing.T) {
	missing := func(path string) error { return &fs.PathError{Op: "open", Path: path, Err: syscall.ENOENT} }
	addFailed := func(dir string, err error) error { return fmt.Errorf("add watch on %s: %w", dir, err) }
	notRegular := func(mode fs.FileMode) error {
		return &fs.PathError{Op: "read", Path: "/c", Err: &osfile.NotRegularError{Mode: mode}}
	}
	same := []struct {
		name string
		a, b problem
	}{
		{"the same errno on two directories",
			problemOf(kindBroken, addFailed("/a/b", syscall.ENOENT)), problemOf(kindBroken, addFailed("/a", syscall.ENOENT))},
		{"a file missing, then its directory",
			problemOf(kindFile, missing("/a/b/c")), problemOf(kindFile, missing("/a/b"))},
		{"too large by different sizes",
			problemOf(kindFile, osfile.TooLarge("/c", 20, 10)), problemOf(kindFile, osfile.TooLarge("/c", 30, 10))},
		{"a sentinel made anew each time",
			problemOf(kindBroken, errors.New("short read")), problemOf(kindBroken, errors.New("short read"))},
		{"an overflow, wrapped or not",
			problemOf(kindBroken, fsnotify.ErrEventOverflow), problemOf(kindBroken, fmt.Errorf("x: %w", fsnotify.ErrEventOverflow))},
	}
	for _, c := range same {
		assert.Equal(t, c.a, c.b, c.name)
	}
	differ := []struct {
		name string
		a, b problem
	}{
		{"two errnos", problemOf(kindBroken, syscall.EIO), problemOf(kindBroken, syscall.ENOENT)},
		{"a directory and a named pipe",
			problemOf(kindFile, notRegular(fs.ModeDir|0o755)), problemOf(kindFile, notRegular(fs.ModeNamedPipe|0o644))},
		{"broken and polling", problemOf(kindBroken, syscall.ENOSPC), problemOf(kindPolling, syscall.ENOSPC)},
		{"missing and too large", problemOf(kindFile, missing("/c")), problemOf(kindFile, osfile.TooLarge("/c", 20, 10))},
	}
	for _, c := range differ {
		assert.NotEqual(t, c.a, c.b, c.name)
	}
	assert.NotEqual(t, problem{}, problemOf(kindRemote, nil), "a problem without a cause is still a problem")
	assert.Equal(t, problemOf(kindBroken, syscall.EIO), problemOf(kindBroken, syscall.EIO), "comparable without panicking")
}
