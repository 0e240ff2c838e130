// Package kubevol lays out and updates a directory the way kubelet does for
// ConfigMap, Secret and projected volumes, so that tests and the demo can
// put a watcher through exactly what a pod sees.
//
// A volume directory holds the payload in a timestamped directory, a ..data
// symlink to it, and one symlink per key:
//
//	<dir>/..2026_11_22_10_00_00.123456789/<key>   the payload
//	<dir>/..data -> ..2026_11_22_10_00_00.123456789
//	<dir>/<key> -> ..data/<key>
package kubevol

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"time"
)

const (
	dataDir    = "..data"
	dataDirTmp = "..data_tmp"
)

// Volume is a kubelet-style volume directory. Keys are top-level file names.
type Volume struct {
	Dir string
	// BeforeSwap, if set, is called just before the ..data swap that makes
	// an update visible; benchmarks time latency from it.
	BeforeSwap func()
}

// New creates the directory if needed and writes the first payload.
func New(dir string, payload map[string]string) (*Volume, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	v := &Volume{Dir: dir}
	if _, err := v.Update(payload); err != nil {
		return nil, err
	}
	return v, nil
}

// Path returns the path of a key, as a pod reads it.
func (v *Volume) Path(key string) string { return filepath.Join(v.Dir, key) }

// Update writes payload the way kubelet's AtomicWriter does, and reports
// whether it wrote anything:
//  1. if the payload equals what is on disk, write nothing (no events);
//  2. write every file into a new ..<UTC timestamp>.<random> directory;
//  3. point a ..data_tmp symlink at it and rename it over ..data;
//  4. link <key> -> ..data/<key> for new keys, remove the links of dropped ones;
//  5. remove the old timestamped directory.
func (v *Volume) Update(payload map[string]string) (bool, error) {
	old, oldTs, err := v.current()
	if err != nil {
		return false, err
	}
	if oldTs != "" && maps.Equal(old, payload) {
		return false, nil
	}
	ts, err := v.writePayload(payload)
	if err != nil {
		return false, err
	}
	tmp := filepath.Join(v.Dir, dataDirTmp)
	if err := os.Symlink(filepath.Base(ts), tmp); err != nil {
		return false, err
	}
	if v.BeforeSwap != nil {
		v.BeforeSwap()
	}
	if err := os.Rename(tmp, filepath.Join(v.Dir, dataDir)); err != nil {
		return false, err
	}
	return true, v.finish(old, oldTs, payload)
}

// SwapRemoveCreate updates the way some writers do (and the report behind
// keepwatch saw): ..data is removed, and only after pause created again,
// pointing at the new payload.
func (v *Volume) SwapRemoveCreate(payload map[string]string, pause time.Duration) error {
	old, oldTs, err := v.current()
	if err != nil {
		return err
	}
	ts, err := v.writePayload(payload)
	if err != nil {
		return err
	}
	if err := os.Remove(filepath.Join(v.Dir, dataDir)); err != nil {
		return err
	}
	time.Sleep(pause)
	if err := os.Symlink(filepath.Base(ts), filepath.Join(v.Dir, dataDir)); err != nil {
		return err
	}
	return v.finish(old, oldTs, payload)
}

// current returns the payload on disk and the name of its directory, ""
// if the volume has none yet.
func (v *Volume) current() (map[string]string, string, error) {
	ts, err := os.Readlink(filepath.Join(v.Dir, dataDir))
	if errors.Is(err, os.ErrNotExist) {
		return nil, "", nil
	}
	if err != nil {
		return nil, "", err
	}
	entries, err := os.ReadDir(filepath.Join(v.Dir, ts))
	if err != nil {
		return nil, "", err
	}
	payload := make(map[string]string)
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(v.Dir, ts, e.Name()))
		if err != nil {
			return nil, "", err
		}
		payload[e.Name()] = string(b)
	}
	return payload, ts, nil
}

func (v *Volume) writePayload(payload map[string]string) (string, error) {
	ts, err := os.MkdirTemp(v.Dir, time.Now().UTC().Format("..2006_01_02_15_04_05."))
	if err != nil {
		return "", err
	}
	if err := os.Chmod(ts, 0o755); err != nil {
		return "", err
	}
	for key, data := range payload {
		p := filepath.Join(ts, key)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			return "", err
		}
		if err := os.Chmod(p, 0o644); err != nil {
			return "", err
		}
	}
	return ts, nil
}

// finish links new keys, unlinks dropped ones and removes the old payload.
func (v *Volume) finish(old map[string]string, oldTs string, payload map[string]string) error {
	for key := range payload {
		if _, err := os.Lstat(v.Path(key)); err != nil {
			if err := os.Symlink(filepath.Join(dataDir, key), v.Path(key)); err != nil {
				return err
			}
		}
	}
	for key := range old {
		if _, ok := payload[key]; !ok {
			if err := os.Remove(v.Path(key)); err != nil {
				return err
			}
		}
	}
	if oldTs == "" {
		return nil
	}
	return os.RemoveAll(filepath.Join(v.Dir, oldTs))
}
