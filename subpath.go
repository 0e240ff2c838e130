package file

import (
	"path/filepath"

	"github.com/keepwatch/file/internal/chain"
	"github.com/keepwatch/file/internal/mountinfo"
)

// subPathMount returns the mount of a single file at one of paths or at
// what it resolves to, if there is one: what kubelet makes of a subPath
// volume mount. Kubelet updates a ConfigMap by swapping the ..data link in
// the volume, and such a bind mount keeps pointing at the old file, so the
// file never changes in a running pod.
func subPathMount(mounts []mountinfo.Mount, paths []string) (mountinfo.Mount, bool) {
	var all []string
	for _, p := range paths {
		all = append(all, filepath.Clean(p))
		if c := chain.Resolve(p, nil); c.Real != "" && c.Real != p {
			all = append(all, c.Real)
		}
	}
	return mountinfo.FileMount(mounts, all...)
}
