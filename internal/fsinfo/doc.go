// Package fsinfo names the filesystem holding a path, and says whether it
// delivers inotify events for changes made elsewhere.
package fsinfo
