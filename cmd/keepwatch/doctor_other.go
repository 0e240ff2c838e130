//go:build !linux

package main

import "runtime"

// What the doctor cannot check off Linux: the mount table (so no check of
// single files mounted on their own, unless given a pod's), the filesystem's type, and inotify's
// limits. It says so rather than pass them.
const (
	eventCheck    = "events"
	hasMountTable = false
	hasFSTypes    = false
)

// eventAPI is what fsnotify watches with on this OS.
var eventAPI = func() string {
	switch runtime.GOOS {
	case "darwin", "freebsd", "netbsd", "openbsd", "dragonfly":
		return "kqueue"
	case "windows":
		return "ReadDirectoryChangesW"
	}
	return "fsnotify"
}()

func explain(err error) string { return err.Error() }

// limits says why it is not checked: the limits it checks are inotify's.
// kqueue holds a descriptor for each watched file and directory instead,
// within the process's open-file limit.
func (r *report) limits() {
	r.skip("limits", "the instance and watch limits are inotify's (Linux)")
}
