//go:build unix

package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// access names what stands between the file and who reads it: the first
// directory on the way (to the path as given, then to where it leads) that
// this user may not enter, or the file, if it may not read it. Run as root,
// which passes any permission, it names instead the first that not every
// user may pass, and who may: the service may run as another user than
// the doctor (runAsUser, a non-root image).
func (r *report) access(paths ...string) {
	root := os.Geteuid() == 0
	for _, p := range steps(paths...) {
		fi, err := os.Stat(p)
		if err != nil {
			return // missing, or unreachable: what blocks it came before
		}
		need, verb := uint32(unix.X_OK), "enter"
		if !fi.IsDir() {
			need, verb = unix.R_OK, "read"
		}
		if root {
			if who := whoMay(fi, need); who != "" {
				if r.once("access " + p) {
					return // said for another file already
				}
				r.add(warn, "access", "read as root, which passes any permission; but %s has %s: %s may %s it, so a service that runs as another user cannot read the file", p, describe(p, ""), who, verb)
				return
			}
			continue
		}
		if err := unix.Access(p, need); errors.Is(err, unix.EACCES) {
			if r.once("access " + p) {
				return
			}
			r.add(problem, "access", "%s may not %s %s%s", whoAmI(), verb, p, describe(p, ": "))
			return
		}
	}
}

// steps lists every directory on the way to each path, from the root, and
// the path itself, each once, in order.
func steps(paths ...string) []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range paths {
		if p == "" {
			continue
		}
		var chain []string
		for d := filepath.Clean(p); ; d = filepath.Dir(d) {
			chain = append(chain, d)
			if d == filepath.Dir(d) {
				break
			}
		}
		for i := len(chain) - 1; i >= 0; i-- {
			if !seen[chain[i]] {
				seen[chain[i]] = true
				out = append(out, chain[i])
			}
		}
	}
	return out
}

// whoMay says who may do what need asks (unix.X_OK or unix.R_OK) on fi,
// if not everyone may: "" if others may.
func whoMay(fi fs.FileInfo, need uint32) string {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return ""
	}
	perm := uint32(fi.Mode().Perm())
	others, group, owner := perm&need != 0, perm&(need<<3) != 0, perm&(need<<6) != 0
	switch {
	case others:
		return ""
	case owner && group:
		return fmt.Sprintf("only its owner, uid %s, and group gid %s,", userName(st.Uid), groupName(st.Gid))
	case group:
		return fmt.Sprintf("only group gid %s", groupName(st.Gid))
	case owner && st.Uid != 0:
		return fmt.Sprintf("only its owner, uid %s,", userName(st.Uid))
	}
	return "no one but root"
}

// describe tells a path's mode and owner, after sep: ": mode 0700
// (drwx------), owner uid 0 (root), group gid 0 (root)"; "" if it cannot
// be told.
func describe(path, sep string) string {
	fi, err := os.Stat(path)
	if err != nil {
		return ""
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return ""
	}
	mode := fi.Mode()
	return fmt.Sprintf("%smode %04o (%s), owner uid %s, group gid %s", sep, mode.Perm(), mode, userName(st.Uid), groupName(st.Gid))
}

// whoAmI names the doctor's user: "uid 65534 (nobody)".
func whoAmI() string { return "uid " + userName(uint32(os.Getuid())) }

func userName(uid uint32) string {
	id := strconv.FormatUint(uint64(uid), 10)
	if u, err := user.LookupId(id); err == nil {
		return id + " (" + u.Username + ")"
	}
	return id
}

func groupName(gid uint32) string {
	id := strconv.FormatUint(uint64(gid), 10)
	if g, err := user.LookupGroupId(id); err == nil {
		return id + " (" + g.Name + ")"
	}
	return id
}

// fileOwner names the owner of f, as ", uid N", where the platform says.
func fileOwner(f *os.File) string {
	info, err := f.Stat()
	if err != nil {
		return ""
	}
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return fmt.Sprintf(", uid %d", st.Uid)
	}
	return ""
}

// links returns how many names the file at path has, and whether it
// could tell.
func links(path string) (uint64, bool) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return 0, false
	}
	return uint64(st.Nlink), true
}
