//go:build !linux

package file

// newDefaultBackend is fsnotify where the kernel's inotify is not to be had.
func newDefaultBackend() (backend, error) { return newFsnotifyBackend() }
