package file

import (
	"github.com/keepwatch/file/internal/chain"
	"github.com/keepwatch/file/internal/mountinfo"
)

// subPathMount returns the mount of a single file at abs or at what it
// resolves to, if there is one: what kubelet makes of a subPath volume
// mount. Kubelet updates a ConfigMap by swapping the ..data link in the
// volume, and such a bind mount keeps pointing at the old file, so the file
// never changes in a running pod.
func subPathMount(mounts []mountinfo.Mount, abs string) (mountinfo.Mount, bool) {
	paths := []string{abs}
	if c := chain.Resolve(abs, nil); c.Real != "" && c.Real != abs {
		paths = append(paths, c.Real)
	}
	return mountinfo.FileMount(mounts, paths...)
}
