// Package fsinfo names the filesystem holding a path, says whether it
// delivers inotify events for changes made elsewhere, and whether it
// stamps every change with a change time of its own.
package fsinfo
