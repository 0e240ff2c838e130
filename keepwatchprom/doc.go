// Package keepwatchprom exports keepwatch's reload metrics to Prometheus:
// for each live config, whether its last reload succeeded, when it last
// did, how many reloads it made and how many failed, and which config is
// in force (an identity the replicas of a service can be compared by);
// for each provider, its updates, problems and re-arms, how it watches,
// whether it is a single file mounted on its own and whether that mount's
// source was replaced since, and when it last read its file; for each
// TLS certificate watcher (package tlscert), the pairs it put in force and
// refused, and when the certificate in force expires.
//
// It is a module of its own, so that keepwatch itself never imports
// client_golang:
//
//	go get github.com/keepwatch/file/keepwatchprom
//
// It requires no koanf module, not even package live: it reads a live
// config through package livestats, which live's types are. So a koanf v1
// project takes it for its providers' metrics, with no second major of
// koanf in its module graph.
//
// The names follow the ones Prometheus users alert on already
// (prometheus_config_last_reload_successful, the Thanos reloader's
// reloader_reloads_total and reloader_reloads_failed_total,
// alertmanager_config_hash; for TLS, controller-runtime certwatcher's
// certwatcher_read_certificate_total and _errors_total, cert-manager's
// certmanager_certificate_expiration_timestamp_seconds), with the prefix
// keepwatch_:
//
//	keepwatch_config_last_reload_successful{config}                 gauge   1 if the last reload published its config, 0 if it failed (or none was published yet)
//	keepwatch_config_last_reload_success_timestamp_seconds{config}  gauge   when the config in force was published (Start counts); absent until one is
//	keepwatch_config_reloads_total{config}                          counter reloads, Start's included, whether they succeeded or not
//	keepwatch_config_reloads_failed_total{config}                   counter reloads that failed while a config was in force (rejected pushes)
//	keepwatch_config_info{config,identity}                          gauge   1, with the identity of the config in force; absent without one
//	keepwatch_config_comparable{config}                             gauge   1 if the config has an identity (IdentityKey or PlainIdentity), 0 if replicas cannot be compared
//	keepwatch_watch_updates_total{path}                             counter updates delivered to the provider's callback
//	keepwatch_watch_errors_total{path}                              counter problems reported (file or watch)
//	keepwatch_watch_restarts_total{path}                            counter watches re-armed, or fallen back to polling, after a failure
//	keepwatch_watch_mode{path,mode}                                 gauge   1 for the mode the watch is in (events, polling, retrying, stopped), 0 for the others
//	keepwatch_watch_subpath_mount{path}                             gauge   1 if the file is a single file mounted on its own (a subPath, docker's -v of a file)
//	keepwatch_watch_mount_source_replaced{path}                     gauge   1 while that mount's source is replaced: its changes no longer arrive
//	keepwatch_watch_last_read_timestamp_seconds{path}               gauge   when the watch last read the file (its start counts); absent until it did
//	keepwatch_watch_last_check_timestamp_seconds{path}              gauge   when the watch last made sure of the file: a read, or a re-check that found it unchanged
//	keepwatch_tls_rotations_total{path}                             counter TLS pairs put in force, New's included
//	keepwatch_tls_rotations_rejected_total{path}                    counter TLS pairs refused; the certificate in force stayed
//	keepwatch_tls_last_rotation_successful{path}                    gauge   0 from a refused pair until the next good one, 1 otherwise
//	keepwatch_tls_last_rotation_timestamp_seconds{path}             gauge   when the certificate in force was put in force
//	keepwatch_tls_certificate_expiration_timestamp_seconds{path}    gauge   when the certificate in force expires (not-after)
//
// Labels are bounded by what the program registers: config is a live
// config's name (livestats.Stats.Name), path a provider's path or a TLS
// watcher's directory, mode one of four. A config is exported from the
// moment it is added, before it starts. The identity label changes only when the config in force does.
//
// The identity is live.Stats.Identity: set IdentityKey on each live
// config, from a key the replicas share, to have one. The alerting rules
// in this module's directory, keepwatch.rules.yml, use these series; see
// docs/operating.md in the repository.
package keepwatchprom
