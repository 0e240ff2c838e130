//go:build !linux

package file

// newDefaultBackend is fsnotify where the kernel's inotify is not to be had.
func newDefaultBackend(h handler) (backend, error) { return newFsnotifyBackend(h) }
