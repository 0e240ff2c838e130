package file

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// The fsnotify backend, which providers use off Linux, carries the basics
// through the hub: a rename-over save, an in-place write after the quiet
// window, a kubelet update, a file removed and back.
func TestTheFsnotifyBackendCarriesTheBasics(t *testing.T) {
	h := newHub(newFsnotifyBackend)
	v := newVolume(t, filepath.Join(t.TempDir(), "config"), config(0))
	_, rv := watched(t, v.path("config.yaml"), withNotifier(h.subscribe), WithRecheckInterval(0))
	path := filepath.Join(t.TempDir(), "plain.yaml")
	write(t, path, "v1\n")
	_, rp := watched(t, path, withNotifier(h.subscribe), WithRecheckInterval(0))

	replace(t, path, "v2\n")
	rp.waitContent(t, "v2\n")
	write(t, path, "v3\n")
	rp.waitContent(t, "v3\n")
	require.NoError(t, os.Remove(path))
	rp.waitErr(t, os.ErrNotExist)
	write(t, path, "v4\n")
	rp.waitContent(t, "v4\n")

	for i := 1; i <= 3; i++ {
		v.update(config(i))
		rv.waitContent(t, config(i)["config.yaml"])
	}
}
