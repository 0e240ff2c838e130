// Package events is keepwatch's process-wide source of filesystem events.
// One backend (the kernel's inotify, read directly, on Linux; fsnotify
// elsewhere) serves every watch in the process through a Hub, which counts
// the kernel's watches by the inode they watch and hands each event to the
// watch loops that want the path it names, never blocking on one. A loop
// sees its share as a Notifier, the seam through which the tests inject
// every failure; a loop that polls has None. On Linux the hub also rings
// a Bell for each loop it handed events to, which the loop waits on in the
// runtime's poller rather than on its channels (Belled).
//
// It knows nothing of reads, decisions or deliveries: it reports events
// in internal/decide's types (Event, Op, Caps, WatchKind, WatchedInode),
// and the watch loop in the root package takes them from there. It must
// not import the root package, nor internal/osfile.
package events
