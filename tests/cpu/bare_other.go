//go:build !linux

package main

import "errors"

// watchBare is Linux's: inotify.
func watchBare(string, func([]byte)) error {
	return errors.New("the bare inotify reader is Linux only")
}

func watchDirs([]string, func([]byte)) error {
	return errors.New("inotify is Linux only")
}

func watchMounts(func()) error {
	return errors.New("the mount table is watched on Linux only")
}
