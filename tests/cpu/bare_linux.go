package main

import (
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// bareMask asks for everything that can change a file in the directory
// or the directory itself: what the simplest correct watcher of a
// Kubernetes volume directory would ask for.
const bareMask = unix.IN_CREATE | unix.IN_DELETE | unix.IN_MOVED_FROM | unix.IN_MOVED_TO |
	unix.IN_MODIFY | unix.IN_CLOSE_WRITE | unix.IN_ATTRIB | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF

// watchBare watches dir with an inotify instance of its own and calls
// event for each event read, with its name (NUL-padded, "" for the
// directory's own). The descriptor is blocking and read by a
// goroutine that sits in read(2): no poller, no channel, the least a Go
// program can spend on the events.
func watchBare(dir string, event func(name []byte)) error {
	return watchDirs([]string{dir}, event)
}

// watchDirs watches dirs as watchBare does dir, for good: the reading
// goroutine stays blocked in read(2) until the process ends.
func watchDirs(dirs []string, event func(name []byte)) error {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC)
	if err != nil {
		return err
	}
	for _, dir := range dirs {
		if _, err := unix.InotifyAddWatch(fd, dir, bareMask); err != nil {
			unix.Close(fd)
			return err
		}
	}
	go readBare(fd, event)
	return nil
}

func readBare(fd int, event func(name []byte)) {
	buf := make([]byte, 64<<10)
	for {
		n, err := unix.Read(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n <= 0 {
			return
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			start := off + unix.SizeofInotifyEvent
			off = start + int(ev.Len)
			event(buf[start:min(off, n)])
		}
	}
}

// watchMounts calls changed each time the mount table changes, for good:
// keepwatch looks at its watches again on each change.
func watchMounts(changed func()) error {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return err
	}
	fds := []unix.PollFd{{Fd: int32(f.Fd()), Events: unix.POLLPRI}}
	go func() {
		defer f.Close()
		for {
			_, err := unix.Poll(fds, -1)
			if err != nil && err != unix.EINTR {
				return
			}
			if fds[0].Revents&unix.POLLPRI != 0 {
				changed()
			}
		}
	}()
	return nil
}
