//go:build !linux

package events

// newDefaultBackend is fsnotify where the kernel's inotify is not to be had.
func newDefaultBackend(h Handler) (Backend, error) { return NewFsnotifyBackend(h) }
