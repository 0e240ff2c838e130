package file

import (
	"log/slog"

	"github.com/keepwatch/file/internal/mountinfo"
)

// checkSubPath warns, once per provider, when the watched file is a mount
// point of its own: a single file bind-mounted, which is what kubelet makes
// of a subPath volume mount. Kubelet updates a ConfigMap by swapping the
// ..data link in the volume, and a bind mount keeps pointing at the old
// file, so the file never changes in a running pod. The watch goes on: an
// in-place write to the mounted file itself would still be seen.
func (w *watch) checkSubPath() {
	f := w.f
	if f.opts.mountInfo == "" || !f.subPathChecked.CompareAndSwap(false, true) {
		return
	}
	mounts, err := mountinfo.ReadFile(f.opts.mountInfo)
	if err != nil {
		return // not Linux, or no /proc: nothing to say
	}
	m, ok := fileMount(mounts, f.abs)
	if !ok {
		return
	}
	f.opts.log().Warn("keepwatch: subPath mount, the file will not change in a running pod; mount the directory instead",
		slog.String("path", f.path), slog.String("mount", m.Point), slog.String("source", m.Root))
	w.emitError(f.errorf("watch", ErrSubPathMount))
}

// fileMount returns the mount of a single file at abs or at what it
// resolves to, if there is one.
func fileMount(mounts []mountinfo.Mount, abs string) (mountinfo.Mount, bool) {
	paths := []string{abs}
	if c := resolve(abs, nil); c.real != "" && c.real != abs {
		paths = append(paths, c.real)
	}
	return mountinfo.FileMount(mounts, paths...)
}
