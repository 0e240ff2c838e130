package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// What the doctor can check on Linux: all of it.
const (
	eventAPI      = "inotify"
	eventCheck    = "inotify" // the name of the check that a watch works
	hasMountTable = true      // /proc/self/mountinfo, for the mount checks
	hasFSTypes    = true      // statfs(2) names the filesystem
)

func explain(err error) string {
	switch {
	case errors.Is(err, syscall.EMFILE):
		return fmt.Sprintf("%v: max_user_instances reached", err)
	case errors.Is(err, syscall.ENOSPC):
		return fmt.Sprintf("%v: max_user_watches reached", err)
	}
	return err.Error()
}

// limits counts the inotify instances and watches of this user's processes
// that it can see, against the kernel's per-user limits.
func (r *report) limits() {
	maxInst, err1 := readInt("/proc/sys/fs/inotify/max_user_instances")
	maxWatches, err2 := readInt("/proc/sys/fs/inotify/max_user_watches")
	if err1 != nil || err2 != nil {
		r.add(info, "limits", "inotify limits unavailable")
		return
	}
	inst, watches, procs := inotifyUsage(os.Getuid())
	sev := ok
	if inst*10 >= maxInst*9 || watches*10 >= maxWatches*9 {
		sev = warn
	}
	r.add(sev, "limits", "uid %d uses %d of %d inotify instances and %d of %d watches (%s seen; each stock koanf provider takes an instance, keepwatch one per process)",
		os.Getuid(), inst, maxInst, watches, maxWatches, plural(procs, "process", "processes"))
}

// inotifyUsage counts the inotify instances and watches held by processes
// of uid, over the processes whose descriptors this process may read.
func inotifyUsage(uid int) (instances, watches, procs int) {
	pids, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range pids {
		var st syscall.Stat_t
		if syscall.Stat(p, &st) != nil || int(st.Uid) != uid {
			continue
		}
		fds, err := os.ReadDir(filepath.Join(p, "fd"))
		if err != nil {
			continue
		}
		procs++
		for _, fd := range fds {
			link, _ := os.Readlink(filepath.Join(p, "fd", fd.Name()))
			if link != "anon_inode:inotify" {
				continue
			}
			instances++
			b, _ := os.ReadFile(filepath.Join(p, "fdinfo", fd.Name()))
			watches += strings.Count(string(b), "inotify wd:")
		}
	}
	return instances, watches, procs
}

// plural counts n things: "1 process", "2 processes".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
