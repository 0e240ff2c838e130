// Package kubevol lays out and updates a directory the way kubelet does
// for ConfigMap, Secret and projected volumes, so that a test can put the
// code that reloads a config through exactly what a pod sees, without a
// cluster. keepwatch's own tests and demo use it.
//
// A volume directory holds the payload in a timestamped directory, a
// ..data symlink to it, and one symlink per key:
//
//	<dir>/..2026_11_22_10_00_00.123456789/<key>   the payload
//	<dir>/..data -> ..2026_11_22_10_00_00.123456789
//	<dir>/<key> -> ..data/<key>
//
// [Volume.Update] makes an update as kubelet's AtomicWriter does, every
// step at once. The steps are there one by one too ([Volume.WriteGeneration],
// [Volume.Swap], [Volume.SyncKeys], [Volume.RemoveGeneration]), for a test
// that looks between them, and [Volume.SwapRemoveCreate] plays the writers
// that remove ..data and create it again rather than rename over it.
package kubevol

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

const (
	dataDir    = "..data"
	dataDirTmp = "..data_tmp"
)

// ErrInvalidKey is returned for a payload key kubelet would refuse, or
// that is not a top-level file name: empty, "." or "..", starting with
// "..", or holding a path separator.
var ErrInvalidKey = errors.New("kubevol: invalid key")

// Volume is a kubelet-style volume directory. Keys are top-level file
// names; a payload maps each key to its content. Like kubelet, make one
// update at a time: a Volume is not safe for concurrent use.
//
// [New] makes a volume. To update one that exists already (made by New in
// another process, or by a test's earlier run), name its directory:
// &Volume{Dir: dir}; its Update then makes the next generation, as kubelet
// does after a restart.
type Volume struct {
	// Dir is the volume directory, where a pod mounts the volume.
	Dir string
	// BeforeSwap, if set, is called just before the ..data swap that makes
	// an update visible; a benchmark can time latency from it.
	BeforeSwap func()
}

// New creates the directory if needed and writes the first payload, as
// kubelet does when the pod starts.
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

// Generation returns the name of the payload directory ..data points to
// now, "" before the first payload.
func (v *Volume) Generation() (string, error) {
	gen, err := os.Readlink(filepath.Join(v.Dir, dataDir))
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	return gen, err
}

// Payload returns the payload on disk: every key of the current
// generation and its content.
func (v *Volume) Payload() (map[string]string, error) {
	gen, err := v.Generation()
	if err != nil || gen == "" {
		return nil, err
	}
	entries, err := os.ReadDir(filepath.Join(v.Dir, gen))
	if err != nil {
		return nil, err
	}
	payload := make(map[string]string)
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(v.Dir, gen, e.Name()))
		if err != nil {
			return nil, err
		}
		payload[e.Name()] = string(b)
	}
	return payload, nil
}

// Update writes payload the way kubelet's AtomicWriter does, and reports
// whether it wrote anything:
//  1. if the payload equals what is on disk, write nothing (no events);
//  2. write every file into a new ..<UTC timestamp>.<random> directory
//     (WriteGeneration);
//  3. point a ..data_tmp symlink at it and rename it over ..data (Swap);
//  4. link <key> -> ..data/<key> for new keys, remove the links of dropped
//     ones (SyncKeys);
//  5. remove the old generation's directory (RemoveGeneration).
func (v *Volume) Update(payload map[string]string) (bool, error) {
	old, err := v.Payload()
	if err != nil {
		return false, err
	}
	oldGen, err := v.Generation()
	if err != nil {
		return false, err
	}
	if oldGen != "" && maps.Equal(old, payload) {
		return false, nil
	}
	gen, err := v.WriteGeneration(payload)
	if err != nil {
		return false, err
	}
	if err := v.Swap(gen); err != nil {
		return false, err
	}
	if err := v.SyncKeys(payload); err != nil {
		return false, err
	}
	return true, v.RemoveGeneration(oldGen)
}

// WriteGeneration writes payload into a new timestamped directory, with
// kubelet's modes, and returns its name. Nothing a pod reads changes yet.
func (v *Volume) WriteGeneration(payload map[string]string) (string, error) {
	if err := checkKeys(payload); err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp(v.Dir, time.Now().UTC().Format("..2006_01_02_15_04_05."))
	if err != nil {
		return "", err
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		return "", err
	}
	for key, data := range payload {
		p := filepath.Join(dir, key)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			return "", err
		}
		if err := os.Chmod(p, 0o644); err != nil {
			return "", err
		}
	}
	return filepath.Base(dir), nil
}

// Swap makes gen the volume's payload: a ..data_tmp symlink to it, renamed
// over ..data, at once. On Windows, where a symlink cannot be renamed over
// another, kubelet removes ..data and links it again instead, and so does
// Swap: for a moment every key is missing there.
func (v *Volume) Swap(gen string) error {
	tmp, data := filepath.Join(v.Dir, dataDirTmp), filepath.Join(v.Dir, dataDir)
	if err := os.Symlink(gen, tmp); err != nil {
		return err
	}
	if v.BeforeSwap != nil {
		v.BeforeSwap()
	}
	if runtime.GOOS != "windows" {
		return os.Rename(tmp, data)
	}
	if err := os.Remove(data); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if err := os.Symlink(gen, data); err != nil {
		return err
	}
	return os.Remove(tmp)
}

// SyncKeys links each key of payload that has no link yet, <key> ->
// ..data/<key>, and removes the links of the keys payload does not have.
func (v *Volume) SyncKeys(payload map[string]string) error {
	if err := checkKeys(payload); err != nil {
		return err
	}
	for key := range payload {
		if _, err := os.Lstat(v.Path(key)); err != nil {
			if err := os.Symlink(filepath.Join(dataDir, key), v.Path(key)); err != nil {
				return err
			}
		}
	}
	entries, err := os.ReadDir(v.Dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		key := e.Name()
		if strings.HasPrefix(key, "..") || e.Type()&os.ModeSymlink == 0 {
			continue
		}
		if _, ok := payload[key]; ok {
			continue
		}
		if target, err := os.Readlink(v.Path(key)); err == nil && target == filepath.Join(dataDir, key) {
			if err := os.Remove(v.Path(key)); err != nil {
				return err
			}
		}
	}
	return nil
}

// RemoveGeneration removes a payload directory no longer in use; "" does
// nothing.
func (v *Volume) RemoveGeneration(gen string) error {
	if gen == "" {
		return nil
	}
	return os.RemoveAll(filepath.Join(v.Dir, gen))
}

// SwapRemoveCreate updates the way some writers do (and the report behind
// keepwatch saw): ..data is removed, and only after pause created again,
// pointing at the new payload. Meanwhile every key is missing. BeforeSwap
// is called before the create, which makes the update visible.
func (v *Volume) SwapRemoveCreate(payload map[string]string, pause time.Duration) error {
	oldGen, err := v.Generation()
	if err != nil {
		return err
	}
	gen, err := v.WriteGeneration(payload)
	if err != nil {
		return err
	}
	if err := os.Remove(filepath.Join(v.Dir, dataDir)); err != nil {
		return err
	}
	time.Sleep(pause)
	if v.BeforeSwap != nil {
		v.BeforeSwap()
	}
	if err := os.Symlink(gen, filepath.Join(v.Dir, dataDir)); err != nil {
		return err
	}
	if err := v.SyncKeys(payload); err != nil {
		return err
	}
	return v.RemoveGeneration(oldGen)
}

// checkKeys returns ErrInvalidKey, naming the key, for the first key of
// payload that is not a plain top-level file name kubelet would write.
func checkKeys(payload map[string]string) error {
	for key := range payload {
		if key == "" || key == "." || strings.HasPrefix(key, "..") || strings.ContainsAny(key, `/\`) {
			return fmt.Errorf("%w: %q", ErrInvalidKey, key)
		}
	}
	return nil
}
