// Package mountinfo reads the mount table of /proc/self/mountinfo, to tell
// a file bind-mounted on its own (a Kubernetes subPath mount) and the kind
// of volume a path lives in.
package mountinfo

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// Path is where the running process's mount table is.
const Path = "/proc/self/mountinfo"

// Mount is one line of the mount table (proc(5)).
type Mount struct {
	ID, Parent int
	Root       string // the path inside the source filesystem that is mounted
	Point      string // where it is mounted
	FSType     string
	Source     string
}

// Parse reads a mount table in the format of /proc/self/mountinfo. Lines it
// cannot make sense of are skipped: a table that half parses still says
// what it can.
func Parse(r io.Reader) ([]Mount, error) {
	var out []Mount
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		if m, ok := parseLine(sc.Text()); ok {
			out = append(out, m)
		}
	}
	if err := sc.Err(); err != nil {
		return out, fmt.Errorf("read mount table: %w", err)
	}
	return out, nil
}

// ReadFile parses the mount table in the file at path.
func ReadFile(path string) ([]Mount, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Parse(f)
}

// parseLine parses
//
//	36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue
//
// where the optional fields before "-" vary in number.
func parseLine(line string) (Mount, bool) {
	f := strings.Fields(line)
	sep := -1
	for i := 6; i < len(f); i++ {
		if f[i] == "-" {
			sep = i
			break
		}
	}
	if sep < 0 || sep+2 >= len(f) {
		return Mount{}, false
	}
	id, err1 := strconv.Atoi(f[0])
	parent, err2 := strconv.Atoi(f[1])
	if err1 != nil || err2 != nil {
		return Mount{}, false
	}
	return Mount{
		ID: id, Parent: parent,
		Root:   unescape(f[3]),
		Point:  unescape(f[4]),
		FSType: f[sep+1],
		Source: unescape(f[sep+2]),
	}, true
}

// unescape undoes the kernel's octal escapes (\040 for a space, \011, \012,
// \134 for a backslash).
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// At returns the mount whose mount point is path, if any; of several, the
// last, which hides the others.
func At(mounts []Mount, path string) (Mount, bool) {
	for i := len(mounts) - 1; i >= 0; i-- {
		if mounts[i].Point == path {
			return mounts[i], true
		}
	}
	return Mount{}, false
}

// FileMount returns the mount of a single file at one of paths, if there is
// one: what kubelet makes of a subPath volume mount. Mount points are
// directories, except for bind mounts of a file; one that cannot be
// stat'ed is judged by the table alone.
func FileMount(mounts []Mount, paths ...string) (Mount, bool) {
	for _, p := range paths {
		m, ok := At(mounts, p)
		if !ok {
			continue
		}
		if info, err := os.Stat(p); err == nil && info.IsDir() {
			continue
		}
		return m, true
	}
	return Mount{}, false
}

// Containing returns the mount that holds path: the one with the longest
// mount point that is path or one of its parents; of several, the last.
func Containing(mounts []Mount, path string) (Mount, bool) {
	best, found := Mount{}, false
	for _, m := range mounts {
		if within(path, m.Point) && (!found || len(m.Point) >= len(best.Point)) {
			best, found = m, true
		}
	}
	return best, found
}

func within(path, dir string) bool {
	if dir == "/" || path == dir {
		return true
	}
	return strings.HasPrefix(path, dir) && path[len(dir)] == '/'
}

// VolumeKind names the Kubernetes volume type a mount comes from, judged by
// the kubelet directory it was mounted from ("configmap", "secret",
// "projected", "downward-api", "empty-dir"), or "" if none. A subPath
// mount's root is under volume-subpaths and names no kind.
func VolumeKind(m Mount) string {
	const marker = "/volumes/kubernetes.io~"
	i := strings.Index(m.Root, marker)
	if i < 0 {
		return ""
	}
	kind := m.Root[i+len(marker):]
	if j := strings.IndexByte(kind, '/'); j >= 0 {
		kind = kind[:j]
	}
	return kind
}

// IsSubPath reports whether the mount's root says kubelet made it for a
// subPath (its source lives under a pod's volume-subpaths directory).
func IsSubPath(m Mount) bool {
	return strings.Contains(m.Root, "/volume-subpaths/")
}
