// Package k8smount is a drop-in replacement for koanf's Kubernetes mount
// provider, github.com/knadh/koanf/providers/k8smount, whose reads never
// mix two updates and whose watch never dies. Change the import; the API
// is upstream's:
//
//	import "github.com/keepwatch/file/k8smount" // was: "github.com/knadh/koanf/providers/k8smount"
//
//	mount := k8smount.Provider("/etc/config", ".", k8smount.Opt{})
//	if err := k.Load(mount, nil); err != nil {
//		log.Fatal(err)
//	}
//
// It reads a ConfigMap or Secret mounted as a volume as one key per file:
// the file's path below the mount, split by delim, its content the string
// value, or what Opt.TransformFunc makes of the two (an empty key leaves
// the file out). It is built on keepwatch's [file.Dir], and imports no
// koanf module, so koanf v1 and v2 projects can both take it.
//
// # What differs from upstream, and why
//
// This is the first release of the drop-in, against upstream v0.1.0 (koanf
// commit 31dd449). Upstream's own tests pass against it unchanged. Where it
// differs, upstream is wrong for a mounted volume:
//
//   - A read takes every key from one generation. Upstream reads each key
//     through its own key -> ..data/key link, so a read made while kubelet
//     swaps ..data mixes two updates, or misses a key, or fails. Here every
//     read resolves ..data once and reads every file from the payload it
//     leads to.
//   - One callback per update. Upstream calls back for every event in the
//     directory, five or more for one kubelet update, some before the swap.
//     Here the callback fires once for each content of the whole mount the
//     application has not got, judged by content: an update that changes
//     nothing fires nothing.
//   - The watch never dies. Upstream's ends at its first fsnotify error,
//     and is blind once the mount directory is made again. This one is
//     keepwatch's: the mount made again, events lost (an inotify queue
//     overflow), a watch that broke are each followed by a re-arm and a
//     full re-read, and problems are logged rather than ending it. So the
//     callback is never called with an error, unless Opt.FileOptions holds
//     [file.WithErrorCallbacks]; and an error callback never means that
//     the watch has ended.
//   - Nothing is called back after Unwatch returns. Upstream's Unwatch
//     closes the watcher and returns, while a callback may still start.
//     [K8SMount.Shutdown] also waits for a callback under way.
//   - The keys of a projected volume's subdirectories are read (a key
//     "app/log_level" is app.log.level with delim "_"). Upstream does not
//     follow the key's link into a directory, and leaves them out.
//   - As upstream, which reads through os.Root, it never reads a file out
//     of the mount: a link that leads out of it is left out (upstream's
//     read fails on it), as is a link that leads nowhere (as upstream).
//   - Reads are bounded: a file that is not a regular file (a FIFO, a
//     device) is an error, never a hang, and the whole mount is read up to
//     16 MiB ([file.WithMaxSize] in Opt.FileOptions changes that).
//   - Keys are applied in lexical order, so a key that is also another's
//     parent ("a" and "a.b" with delim ".") always gives the same config:
//     the parent's map. Upstream applies them in Go's map order.
//
// Error texts are upstream's, so that code and tests that compare them
// keep working; they wrap keepwatch's errors, so errors.Is works with
// [fs.ErrNotExist], [file.ErrNotRegularFile] and the others.
package k8smount
