// Package live keeps a koanf config in force while its files change: it
// reloads on each change of what it watches, validates, and publishes the
// new config whole, or keeps the last good one.
//
// [Config] publishes a *koanf.Koanf; [Value] publishes the typed value a
// service actually reads (its own struct, or a component built from it: a
// compiled policy, a client), together with the koanf instance it was
// built from. Both watch keepwatch's providers ([file.File],
// [file.FileSet]) or any provider with a koanf-style Watch method.
//
// # The right reload
//
// koanf's Load merges into the instance it is given, so the reload koanf's
// README shows, k.Load(f, parser) again in the watch callback, keeps every
// key removed from the file: a revoked role stays granted until the
// process restarts. And a request that reads the config while the callback
// loads, or between the Loads of two files, sees part of the old config
// and part of the new. A live config loads each change into a fresh
// instance, builds and validates it, and only then swaps it in with one
// atomic store: a removed key is gone, and a reader gets either the old
// config or the new one, whole.
//
// A reader takes the config in force once per request (Config.Koanf,
// Value.Get: an atomic load, no lock, no allocation) and uses that one
// for the whole request; it must not keep it beyond, or it goes on
// reading an old config. Nothing published is ever changed, so a reader
// needs no lock; a Value's T must not be changed by its readers either.
//
// # Failures, the log and OnError
//
// A reload fails when Load fails (a file that does not parse), when a
// Value's Build fails, or when Validate rejects (the error matches
// [ErrRejected]). The config in force stays, and the next good change is
// applied. Each failure after Start is:
//
//   - logged once, at WARN, "keepwatch: config not reloaded, the last good
//     one stays in force", with the error, the reason (change or request)
//     and the path whose change caused it;
//   - counted in Stats (Rejected, LastError);
//   - told to OnError, if set.
//
// Each config published is logged once at INFO, as Prometheus and nginx
// log theirs: the first ("config loaded", generation 1) and each reload
// ("config reloaded", with its reason, the path whose change it was and
// the config's generation; "config reloaded, the failure is over" after
// failures). Every record names the config (its Name, or else the
// paths it watches) and carries the paths it watches, and every error
// names the config too: with no Name, a config watching one file names
// that file in its errors, a parse error's included.
//
// OnError is told in addition to the log, never instead of it, whether or
// not it is set: it is the hook to count or alert. An application that
// logs in OnError logs each failure twice; to have the records in its own
// format, it sets Logger instead. A failed Start is neither logged nor
// told to OnError: Start returns the error, naming the config, and the
// caller decides (usually to exit, or to try Start again). A problem a
// watched provider calls back with is told to OnError; it is logged here
// only if the provider is not one of keepwatch's, which log their own.
//
// # Start-up and readiness
//
// Start fails if the first load fails. StartWait waits instead, for a
// config whose files are not there yet (an init container or a sidecar
// writes them): it watches first (give keepwatch providers
// file.WithWaitForPath, so that their watches start before their files are
// there), loads on each change the watches tell of, and returns once a
// config is published or its context is done. Ready
// (a func() error) and ReadyHandler (an http.Handler for /readyz) say
// whether a good config is in force. A rejected push does not make a
// config unready: it reaches every replica at once, so failing readiness
// on it would take the whole Service down while the last good config
// still serves. Neither Start's retries nor StartWait's count as Rejected.
//
// # Comparing replicas
//
// Stats.Identity identifies the config in force across processes, for a
// fleet's metrics to tell whether every replica runs the same config. With
// IdentityKey, a key the replicas share (from a Secret they all mount), it
// is an HMAC-SHA256 of [Canonical]: the JSON of the config in force, its
// keys sorted. It is the config published, not the file last read: after a
// rejected push it stays that of the config that serves. It hashes what
// the config holds, not the files, so comments, key order and the node's
// kubelet generation do not change it, and it is the same across restarts.
// Everything Load put in the config counts, environment variables and
// flags included: a value of one pod's own (its name) makes its Identity
// its own. Without IdentityKey there is no Identity; PlainIdentity asks
// for the plain SHA-256 instead, which lets anyone who can read it test
// guesses at the config, so never on one that holds a secret.
//
// A config with nothing in Watch is legitimate (one that only env or flags
// feed, reloaded on SIGHUP through Reload), but more often Watch was
// forgotten, and the config would silently never follow its files: Start
// logs one WARN record saying that it reloads only on Reload.
package live
