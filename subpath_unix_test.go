//go:build unix

package file

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Mount tables name Unix paths: these tests give the provider one, a copy
// of a pod's, and run wherever such paths do.

// A single file mounted on its own (a subPath mount, as a pod's mount
// table shows it) is reported once, through the callback and the log, and
// the watch goes on.
func TestSubPathMountIsReportedOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	write(t, path, "v1\n")
	table := fixtureWithMount(t, path)
	logs := &logRecords{}
	f, r := watched(t, path, withMountInfo(table), WithLogger(slog.New(logs)))

	errs := waitErrs(t, r, 1)
	assert.ErrorIs(t, errs[0], ErrSubPathMount)
	assert.Equal(t, "watch "+path+": keepwatch: single-file mount from /var/lib/kubelet/pods/8c1f/volume-subpaths/cfg/app/1: "+
		"edits in place arrive, a replacement does not; mount the directory instead", errs[0].Error())
	assert.Contains(t, logs.at(slog.LevelInfo), "WARN keepwatch: single-file mount: edits in place arrive, a replacement does not; mount the directory instead")
	assert.True(t, f.Stats().SubPath)
	assert.False(t, f.Stats().SourceReplaced)

	replace(t, path, "v2\n") // an in-place change of the mounted file is still seen
	r.waitContent(t, "v2\n")
	shutdown(t, f)
	require.NoError(t, f.Watch(r.cb))
	replace(t, path, "v3\n")
	r.waitContent(t, "v3\n")
	assert.Len(t, r.errs(), 1, "once per provider, not per Watch: %s", r)
}

// The recorded table of a real pod: /etc/app/config.yaml is a subPath
// mount, /etc/flags a ConfigMap mounted as a directory.
func TestSubPathFixture(t *testing.T) {
	table := filepath.Join("testdata", "mountinfo-subpath")
	_, r := watched(t, "/etc/app/config.yaml", withMountInfo(table), WithWaitForPath())
	errs := waitErrs(t, r, 2)
	assert.True(t, errors.Is(errs[0], ErrSubPathMount) || errors.Is(errs[1], ErrSubPathMount), "%s", r)

	dir := filepath.Join(t.TempDir(), "flags")
	require.NoError(t, os.Mkdir(dir, 0o755))
	write(t, filepath.Join(dir, "flags.yaml"), "a: 1\n")
	_, r2 := watched(t, filepath.Join(dir, "flags.yaml"), withMountInfo(fixtureWithMount(t, dir)))
	replace(t, filepath.Join(dir, "flags.yaml"), "a: 2\n")
	r2.waitContent(t, "a: 2\n")
	assert.Empty(t, r2.errs(), "a directory mount is what is wanted")
}

// A mount table that shows the source deleted, as the kernel shows a
// source replaced on the host side: it is told, once, until the table
// shows the mount made again.
func TestASourceTheMountTableShowsDeletedIsTold(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	write(t, path, "v1\n")
	table := fixtureWithMount(t, path)
	root := "/var/lib/kubelet/pods/8c1f/volume-subpaths/cfg/app/1"
	data, err := os.ReadFile(table)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(table, []byte(strings.Replace(string(data), root, root+"//deleted", 1)), 0o644))
	logs := &logRecords{}
	f, r := watchedByEvents(t, path, withMountInfo(table), WithLogger(slog.New(logs)))

	errs := waitErrs(t, r, 2)
	assert.ErrorIs(t, errs[1], ErrSourceReplaced)
	assert.Contains(t, errs[1].Error(), "mount source replaced: "+root+" was replaced", "the source, without the kernel's mark")
	assert.True(t, f.Stats().SourceReplaced)
	f.Recheck()
	replace(t, path, "v2\n") // a poll reading the file, as after the mount was made again
	r.waitContent(t, "v2\n")
	assert.True(t, f.Stats().SourceReplaced, "the table still says so")
	assert.Len(t, r.errs(), 2, "told once: %s", r)

	require.NoError(t, os.WriteFile(table, data, 0o644)) // the mount made again
	replace(t, path, "v3\n")
	r.waitContent(t, "v3\n")
	assert.False(t, f.Stats().SourceReplaced)
	assert.Contains(t, logs.at(slog.LevelInfo), "INFO keepwatch: mount source back")
}

func TestNoMountTableNoWarning(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	write(t, path, "v1\n")
	_, r := watched(t, path, withMountInfo(filepath.Join(t.TempDir(), "missing")))
	replace(t, path, "v2\n")
	r.waitContent(t, "v2\n")
	assert.Empty(t, r.errs())
}

// fixtureWithMount writes the recorded mount table plus a bind mount at
// point, as kubelet makes for a subPath.
func fixtureWithMount(t *testing.T, point string) string {
	t.Helper()
	base, err := os.ReadFile(filepath.Join("testdata", "mountinfo-subpath"))
	require.NoError(t, err)
	line := fmt.Sprintf("1600 1581 259:1 /var/lib/kubelet/pods/8c1f/volume-subpaths/cfg/app/1 %s ro,relatime - ext4 /dev/nvme0n1p1 rw\n",
		strings.ReplaceAll(point, " ", `\040`))
	out := filepath.Join(t.TempDir(), "mountinfo")
	require.NoError(t, os.WriteFile(out, append(base, line...), 0o644))
	return out
}
