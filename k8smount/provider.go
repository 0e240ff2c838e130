package k8smount

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/keepwatch/file"
)

// ErrAlreadyWatched is returned by Watch when the mount is already being
// watched. Its text is upstream's.
var ErrAlreadyWatched = errors.New("mount is already being watched")

// errReadBytes is upstream's text, kept for code that compares it.
var errReadBytes = errors.New("k8smount provider does not support this method")

// Opt represents optional configuration passed to the provider.
type Opt struct {
	// TransformFunc is an optional callback that takes a volume mount
	// field's name and value, runs arbitrary transformations on them and
	// returns a transformed string key and value of any type. Common
	// usecase are lowercasing keys, replacing _ with . etc. For example,
	// DB_HOST -> db.host. If the returned key is an empty string (""), it
	// is ignored altogether.
	TransformFunc func(k, v string) (string, any)

	// FileOptions are keepwatch's options for reading and watching the
	// mount: file.WithLogger, file.WithErrorCallbacks, file.WithPolling,
	// file.WithMaxSize. Not in upstream.
	FileOptions []file.Option
}

// K8SMount is a koanf provider for a Kubernetes volume mount. Create it
// with [Provider]. It is safe for use by multiple goroutines.
type K8SMount struct {
	mount     string
	delim     string
	transform func(k, v string) (string, any)
	set       *file.FileSet
}

// Provider creates a new K8SMount provider capable of reading in mounted
// secrets and configmaps in a Kubernetes pod.
//
// The given mount should be the mount point of the configmap or secret.
// The delimiter is used to create a hierarchy of keys based on the mounted
// filename. For example, a configmap mounted at "/mnt/config/" with a key
// of "log_level" set to "INFO" and a delimiter of "_" would result in
// {"log":{"level":"INFO"}} being read as configuration.
//
// Keys mounted in directories are always split. For example, if the above
// key was mounted at "log/level" instead, it will always produce
// {"log":{"level":"INFO"}} as the result.
//
// It does no I/O.
func Provider(mount, delim string, o Opt) *K8SMount {
	return &K8SMount{
		mount:     filepath.Clean(mount),
		delim:     delim,
		transform: o.TransformFunc,
		set:       file.Dir(mount, nil, o.FileOptions...),
	}
}

// ReadBytes is not supported by the provider.
func (*K8SMount) ReadBytes() ([]byte, error) {
	return nil, errReadBytes
}

// Read collects the contents of all files under the mount point and
// returns them as a map: all of one generation of the volume. While a
// watch callback runs, it returns what the callback was fired for.
func (k *K8SMount) Read() (map[string]any, error) {
	files, err := k.set.ReadFiles()
	if err != nil {
		return nil, k.readError(err)
	}
	flat := make(map[string]any, len(files))
	for name, data := range files {
		key := strings.ReplaceAll(filepath.ToSlash(name), "/", k.delim)
		var val any = string(data)
		if k.transform != nil {
			key, val = k.transform(key, string(data))
		}
		if key != "" {
			flat[key] = val
		}
	}
	return unflatten(flat, k.delim), nil
}

// readError says what failed in upstream's words: the mount itself could
// not be opened, or a file in it could not be read.
func (k *K8SMount) readError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Path == k.mount {
		return fmt.Errorf("failed to open mount: %w", &fs.PathError{Op: "open", Path: k.mount, Err: pe.Err})
	}
	return fmt.Errorf("failed to read configuration from mount: %q: %w", k.mount, err)
}

// Watch starts watching the files under the mount point, and calls fn
// with (nil, nil) once for each update of the mount that changes its
// content, until Unwatch. Between the two, Read returns what the callback
// was fired for.
//
// Only one watch may run at a time: another Watch returns
// ErrAlreadyWatched. The watch never ends on its own: see the package
// documentation.
func (k *K8SMount) Watch(fn func(event any, err error)) error {
	err := k.set.Watch(func(_ any, err error) { fn(nil, err) })
	if errors.Is(err, file.ErrAlreadyWatching) {
		return ErrAlreadyWatched
	}
	return err
}

// Unwatch stops a previously started Watch: no callback starts after it
// returns. It does not wait for a callback under way, so that a callback
// may call it; Shutdown does.
func (k *K8SMount) Unwatch() error {
	return k.set.Unwatch()
}

// Shutdown stops the watch, and waits until its last callback has
// returned, or ctx is done. Not in upstream.
func (k *K8SMount) Shutdown(ctx context.Context) error {
	return k.set.Shutdown(ctx)
}

// Stats returns a snapshot of the mount's watch. Not in upstream.
func (k *K8SMount) Stats() file.Stats {
	return k.set.Stats()
}

// unflatten makes a nested map of flat keys split by delim, as koanf's
// maps.Unflatten does, applying the keys in lexical order: a key that is
// also another key's parent gives way to the parent's map.
func unflatten(flat map[string]any, delim string) map[string]any {
	out := make(map[string]any)
	for _, key := range slices.Sorted(maps.Keys(flat)) {
		parts := []string{key}
		if delim != "" {
			parts = strings.Split(key, delim)
		}
		next := out
		for _, p := range parts[:len(parts)-1] {
			sub, ok := next[p].(map[string]any)
			if !ok {
				sub = make(map[string]any)
				next[p] = sub
			}
			next = sub
		}
		next[parts[len(parts)-1]] = flat[key]
	}
	return out
}
