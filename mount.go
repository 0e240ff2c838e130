package file

import (
	"os"
	"path/filepath"

	"github.com/keepwatch/file/internal/chain"
	"github.com/keepwatch/file/internal/filemount"
	"github.com/keepwatch/file/internal/mountinfo"
	"github.com/keepwatch/file/internal/osfile"
)

// A single file mounted on its own (a Kubernetes subPath mount, docker's
// -v ./config.yaml:/etc/app/config.yaml) is of the file, not of its name
// on the host side: an edit in place of its source arrives, a replacement
// never does (internal/filemount says what the kernel shows of one). The
// watch says so once per provider when it first finds such a mount, and
// judges whether its source was replaced when each watch starts, at each
// re-check and poll, and when the file's attributes change (its link
// count drops to 0 as the host replaces its source, which its own watch
// hears at once); once replaced, at each read too, which is how a mount
// made again shows (its file is another: a re-check reads it).
//
// This file holds what is judged and how the facts are gathered; each
// watch carries it out as it starts and re-checks, and what it found is
// kept with the provider's other numbers, under its lock.

// mountState is what the watch knows of the single file mounted at its
// path. Guarded by core.mu.
type mountState struct {
	point  string // where it is mounted; "" if no mount was found
	source string // the source's path on the host side, as the mount table first gave it
	id     int    // the mount's ID in the table
	state  filemount.State
}

// subPathMount returns the mount of a single file at one of paths or at
// what it resolves to, if there is one.
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

// mountFacts gathers what filemount judges, for the subject's paths, from
// the mount table at table, and returns the mount found, if any. known is
// what the watch found before: where the mount is the one it found, by its
// ID, the facts name its source as found then, which a source renamed away
// on the host side no longer is.
func mountFacts(table string, paths []string, known mountState) (filemount.Facts, mountinfo.Mount, error) {
	mounts, err := mountinfo.ReadFile(table)
	if err != nil {
		return filemount.Facts{}, mountinfo.Mount{}, err
	}
	m, found := subPathMount(mounts, paths)
	f := filemount.Facts{Mounted: found, Root: m.Root}
	if !found {
		return f, m, nil
	}
	if known.point != "" && m.ID == known.id {
		f.Source = known.source
	}
	if info, err := os.Stat(m.Point); err == nil {
		f.Resolves, f.Links = true, osfile.LinkCount(info)
	}
	return f, m, nil
}
