// Package keepwatchprom exports keepwatch's reload metrics to Prometheus:
// for each live config, whether its last reload succeeded, when it last
// did, how many reloads it made and how many failed, and which config is
// in force (an identity the replicas of a service can be compared by);
// for each provider, its updates, problems and re-arms, how it watches,
// whether it is a subPath mount, and when it last read its file.
//
// It is a module of its own, so that keepwatch itself never imports
// client_golang:
//
//	go get github.com/keepwatch/file/keepwatchprom
//
// The names follow the ones Prometheus users alert on already
// (prometheus_config_last_reload_successful, the Thanos reloader's
// reloader_reloads_total and reloader_reloads_failed_total,
// alertmanager_config_hash), with the prefix keepwatch_:
//
//	keepwatch_config_last_reload_successful{config}                 gauge   1 if the last reload published its config, 0 if it failed (or none was published yet)
//	keepwatch_config_last_reload_success_timestamp_seconds{config}  gauge   when the config in force was published (Start counts); absent until one is
//	keepwatch_config_reloads_total{config}                          counter reloads, Start's included, whether they succeeded or not
//	keepwatch_config_reloads_failed_total{config}                   counter reloads that failed while a config was in force (rejected pushes)
//	keepwatch_config_info{config,identity}                          gauge   1, with the identity of the config in force; absent without one
//	keepwatch_watch_updates_total{path}                             counter updates delivered to the provider's callback
//	keepwatch_watch_errors_total{path}                              counter problems reported (file or watch)
//	keepwatch_watch_restarts_total{path}                            counter watches re-armed, or fallen back to polling, after a failure
//	keepwatch_watch_mode{path,mode}                                 gauge   1 for the mode the watch is in (events, polling, retrying, stopped), 0 for the others
//	keepwatch_watch_subpath_mount{path}                             gauge   1 if the file is a subPath mount, which never changes in a running pod
//	keepwatch_watch_last_read_timestamp_seconds{path}               gauge   when the watch last read the file (its start counts); absent until it did
//	keepwatch_watch_last_check_timestamp_seconds{path}              gauge   when the watch last made sure of the file: a read, or a re-check that found it unchanged
//
// Labels are bounded by what the program registers: config is a live
// config's name (live.Stats.Name), path a provider's path, mode one of
// four. The identity label changes only when the config in force does.
//
// The identity is live.Stats.Identity: set IdentityKey on each live
// config, from a key the replicas share, to have one. The alerting rules
// in this module's directory, keepwatch.rules.yml, use these series; see
// docs/operating.md in the repository.
package keepwatchprom
