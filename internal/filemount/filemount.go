// Package filemount says what the state of a single file mounted on its
// own means: a Kubernetes subPath mount, or docker's
// -v ./config.yaml:/etc/app/config.yaml.
//
// Such a mount is of the file, not of its name on the host side: an edit
// in place of the source reaches it, and a replacement (a rename over the
// source, a removal and a new file: sed -i, most editors, mv, kubelet's
// update of a ConfigMap) never does. The mount holds the old file for
// good, and the kernel shows it: the file's link count is 0 while the
// mount point still leads to it, and the mount table shows the mount's
// root as the source's path with "//deleted" after it. A source renamed
// away on the host side (mv, an editor that keeps the old file as a backup
// copy, a directory above it renamed) keeps its links, and the table
// shows the mount's root under its new name: the host's name for it leads
// elsewhere, or nowhere.
//
// It does no I/O: the caller gathers the facts (a stat, the mount table),
// and carries out what the judgment says.
package filemount

import "strings"

// Facts is what the caller found of a watched path, now.
type Facts struct {
	// Mounted says that the mount table has a mount of a single file at
	// the path, or where the path leads.
	Mounted bool
	// Root is that mount's root as the table shows it: the source's path
	// in its filesystem, and "//deleted" after it once the kernel unlinked
	// it there.
	Root string
	// Resolves says that the path leads to a file now; Links is that
	// file's link count.
	Resolves bool
	Links    uint64
	// Source is the source's path, as the table gave it when the watch
	// first found this mount; "" if not known.
	Source string
}

// State is what a watched path's mount is.
type State uint8

const (
	// Unmounted: no single file is mounted at the path: nothing to say.
	Unmounted State = iota
	// Intact: a single file mounted on its own, whose source is still the
	// file its path on the host side names. Edits in place arrive.
	Intact
	// Replaced: the source was replaced or removed on the host side. The
	// mount holds the old file until it is made again: nothing that
	// changes on the host side arrives.
	Replaced
)

var stateNames = [...]string{"unmounted", "intact", "replaced"}

func (s State) String() string { return stateNames[s] }

// deletedSuffix is what the kernel puts after the path of a mount's root
// whose name was unlinked (dentry_path, in /proc/self/mountinfo).
const deletedSuffix = "//deleted"

// Judge says what the facts mean. A file that the path leads to with no
// link left is held there only by a mount, whatever the table says; a root
// the kernel marks deleted says the same of a source that still has
// another name; and a root that is not the source first found is the
// source renamed away, its name left to another file or to none.
func Judge(f Facts) State {
	switch {
	case !f.Mounted:
		return Unmounted
	case f.Resolves && f.Links == 0, strings.HasSuffix(f.Root, deletedSuffix),
		f.Source != "" && Source(f.Root) != f.Source:
		return Replaced
	}
	return Intact
}

// Source is the path a mount's root names on the host side, without the
// kernel's mark of a deleted one.
func Source(root string) string { return strings.TrimSuffix(root, deletedSuffix) }

// Change is what a watch tells when its mount's state changes.
type Change uint8

const (
	// Nothing changed that the watch tells of.
	Nothing Change = iota
	// Tell: the source was replaced. Told once, while it lasts.
	Tell
	// Over: it is no longer: the mount was made again (or is gone), and
	// the path leads to a file that changes can reach.
	Over
)

var changeNames = [...]string{"nothing", "tell", "over"}

func (c Change) String() string { return changeNames[c] }

// Next says what a watch that last judged its mount was tells when it
// judges it now. A watch that starts (fresh) is told of a replacement that
// lasts, as of any other problem, even if the watch before it was.
func Next(was, now State, fresh bool) Change {
	switch {
	case now == Replaced && (was != Replaced || fresh):
		return Tell
	case now != Replaced && was == Replaced:
		return Over
	}
	return Nothing
}
