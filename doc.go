// Package file is a drop-in replacement for koanf's file provider
// (github.com/knadh/koanf/providers/file) that keeps watching a config file
// through everything Kubernetes and people do to it.
//
// Swap the import and nothing else: code written for the stock provider
// works unchanged, except that the watch no longer dies.
//
//	import "github.com/keepwatch/file" // was "github.com/knadh/koanf/providers/file"
//
// That holds for koanf v1 projects as for v2 ones: this package imports no
// koanf module, its providers are a koanf.Provider of either major, and
// [Set] and [Glob] take either major's parsers as a [Parser]. Package
// live, which builds koanf v2 instances, is a module of its own.
//
// # The right reload
//
// koanf's Load merges into the instance it is given, so the reload koanf's
// README shows, k.Load(f, parser) again in the callback, keeps a key
// removed from the file: a revoked role stays granted until the process
// restarts, and a request that reads the config during the reload sees
// part of the old one and part of the new. Package
// [github.com/keepwatch/file/live] builds a fresh instance on each change,
// validates it and swaps it in whole, as a koanf instance or as the
// service's own typed struct:
//
//	policy := file.Provider("/etc/authz/policy.yaml")
//	cfg := &live.Config{
//		Load:     func(k *koanf.Koanf) error { return k.Load(policy, yaml.Parser()) },
//		Watch:    []live.Watcher{policy},
//		Validate: checkPolicy, // a bad push keeps the last good config
//	}
//	if err := cfg.Start(); err != nil {
//		log.Fatal(err)
//	}
//	defer cfg.Close()
//	...
//	k := cfg.Koanf() // in each request: the config in force, whole
//
// Several files read as one config, the keys of one ConfigMap or a conf.d
// directory, are a [FileSet] ([Set], [Glob], [Dir]): one callback per
// change of the set, and in a kubelet volume never two generations in one
// read. [FileSet.ReadFiles] reads them unparsed: certificates, keys,
// tokens. Package tlscert serves a TLS certificate from a Secret mount on
// it, and package k8smount is a drop-in for koanf's k8smount provider.
//
// # What fires the callback
//
// The callback fires when the file's content differs from what the
// application last got, whatever the change looked like on disk: a kubelet
// ..data symlink swap, a rename-over save, an in-place write, an edit to a
// symlink's target in another directory, a file or directory deleted and
// created again. Change is judged by reading and comparing content, so a
// touch, a chmod or an identical rewrite fire nothing, a burst of changes
// fires for the final content, and the content on disk after things settle
// is always the content the callback saw last.
//
// Nothing half-written is delivered, but for one exception: a writer that
// holds the file open and pauses over a second mid-write is delivered
// half, then whole at its close (below). Atomic updates (rename, symlink
// swap) are read as soon as their event arrives. An in-place write is read when
// its writer closes the file, so the reload does not see a half-written
// file, nor the empty one a shell redirect leaves before the producer
// writes; so is a file removed and created again in its place. A close
// says that a writer is done, not that the file is whole: what is read is
// handed on only if no other writer had begun by then (two os.WriteFile
// calls in a row), and then that writer's close reads. A file that a
// writer's close leaves empty is delivered only once no writer has
// followed for a second, so that a file emptied and then appended to
// (truncate -s 0 f && cat new >> f) is delivered once, whole. A writer
// that keeps the file open (a slow producer behind a shell redirect,
// pausing between writes; tests and long-lived writers) is read once it
// has gone a second without a write, and again at its close if that
// changed anything: one that pauses mid-write longer than that, holding
// the file open, is read half done there, and delivered whole at its close
// (koanf's stock provider reads at every write). On Linux the watch knows
// who holds the file open for writing, and never makes a writer wait on
// it: the file's own watch reports every open and close of the file, which
// the watch counts from a moment the kernel said no writer held it (a read
// lease, taken and let go at once), so that a read right after a writer's
// close needs nothing more; a file new to the watch is asked of as it is
// read (the lease let go at once, its change time, fine-grained since
// Linux 6.13 on ext4, xfs, btrfs and tmpfs, telling a writer that began
// meanwhile; held through the read elsewhere). The kernel answers the
// file's owner and root, on a local filesystem: a writer no event told
// of, that opened the file before the path led to it, is then waited for
// as any other. Where the kernel does not
// report the close (off Linux, when polling), the file is read once it has
// gone a quiet window ([WithQuietWindow]) without a write. On Linux, every
// directory the path goes through is watched, and the file itself, each
// for what can change where the path leads or what the file holds, so that
// others' activity beside it wakes nothing (where the kernel does not say
// who writes, or the file is missing, the file's directory also reports
// its entries' closes): a plain ancestor renamed or
// exchanged, a write through a hard link or to the source of a bind mount,
// a mount over the path, all arrive in milliseconds.
//
// # What never stops it
//
// Whatever would end the stock provider's watch (a missing symlink, a
// removed file or directory, an inotify error or queue overflow, a failed
// watch) is logged once and then repaired: a missing file is waited for
// from the nearest existing directory and delivered as soon as it is back,
// and a broken watch is re-armed after a short, capped, jittered backoff,
// with a full re-read so that an update made while it was down is not lost.
// A read that fails for a reason of the process, not of the file (too many
// open files, no memory), is reported once as what it is and retried with
// the same backoff until it reads. A directory on the path that the process
// may not enter is watched from the directory above, and the file read as
// soon as it can be reached. A periodic re-check ([WithRecheckInterval]) is
// the safety net for missed events. Only [File.Unwatch],
// [File.Shutdown] or the context given to [File.WatchWithContext] ends a
// watch, once started: like the stock provider's, Watch fails on a path
// that does not resolve when it is called (a file or directory missing, a
// dangling symlink), and watches nothing; [WithWaitForPath] starts it
// anyway, to wait for the path. The watch outlives even its directory, so
// a test ends the watches it starts: with t.Cleanup and Unwatch, or with
// the test's context, f.WatchWithContext(t.Context(), cb).
//
// # What an error callback means
//
// With the stock provider, cb(nil, err) was the end of the watch, and code
// is written around that: it restarts a watch, or exits. keepwatch's watch
// does not end, so by default it never calls the callback with an error;
// problems are logged and counted in [File.Stats]. [WithErrorCallbacks]
// makes the callback hear of each problem as it happens; the watch goes on
// after it.
//
// [File.Recheck] makes the watch look now, for a SIGHUP or an admin
// endpoint: judged by content like any other trigger.
//
// # Unwatch and Shutdown
//
// Once [File.Unwatch] returns, no callback is begun. Like the stock
// provider's, it does not wait for a callback that is running (one begun
// before it may still be), so it cannot deadlock with one that waits for its
// caller. [File.Shutdown] also waits, as long as its context allows, for
// the running callback to return.
//
// # Cost
//
// All providers in a process share one inotify instance, read directly on
// Linux (fsnotify elsewhere), with each kernel watch counted by the inode
// it watches and events dispatched only to the providers whose path they
// name. When inotify cannot be had (a sandbox refuses it, the kernel's
// limits are reached), or the file is on a filesystem that reports no
// changes made elsewhere (NFS, SMB, FUSE), a provider polls it every 2 s,
// a stat each time (and a read in the second after a write, whose stat
// may not show a second write), and says so ([ErrPolling]).
//
// # Operating
//
// The provider logs one record per change of state to its [slog.Logger]
// ([WithLogger]; [slog.Default] unless set): watch started, update
// delivered, file problem and file back, watch interrupted and re-armed,
// polling. [File.Stats] tells the same as figures, for expvar or a metrics
// system. The keepwatch command (cmd/keepwatch) watches a path from a shell
// and diagnoses why a path does not reload.
//
// Watched files are often Secrets, so nothing the provider logs or puts in
// Stats by default lets a reader test a guess at the content: versions are
// told apart by the kubelet generation, size, modification time and a
// fingerprint keyed by a per-process random key. [WithContentHash] adds
// the plain SHA-256, for files that are not secret.
//
// # Kubernetes and containers
//
// Mount the ConfigMap or Secret, or docker's config directory, as a
// directory and read the file inside it. A single file mounted on its own
// (a key mounted with subPath, docker's -v ./config.yaml:/etc/app/config.yaml)
// is a mount of the file, not of its name on the host side: an edit in
// place of its source arrives, a replacement of the source (kubelet's
// updates, sed -i, most editors' saves, mv) never does. The provider says
// so once ([ErrSubPathMount]), and tells a replacement as soon as the
// kernel shows it ([ErrSourceReplaced], Stats.SourceReplaced): the file's
// link count drops to 0 while the mount still holds it, or, for a source
// renamed away and kept (mv, vim's backup copy), the mount table shows the
// source under its new name.
// The package github.com/keepwatch/file/kubevol plays kubelet's volume
// updates, so that a service's tests can put its reload through them.
//
// # Platforms
//
// Linux is the platform it is built for. On macOS, the BSDs and Windows it
// watches through fsnotify (kqueue, ReadDirectoryChangesW): the directories
// on the path that hold the file or a symlink, with in-place writes read
// after the quiet window, and what only inotify shows (an ancestor
// renamed, a write through a hard link, a mount) found by the re-check.
package file
