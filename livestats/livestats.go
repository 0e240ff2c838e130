// Package livestats is what a live config (package
// github.com/keepwatch/file/live) reports: its [Stats], and the
// [Reporter] that readiness checks and metrics read them through.
//
// It imports no koanf module, as the rest of the library's module, so
// that what only reads a live config's stats, keepwatchprom's collector
// among them, takes live configs without bringing koanf v2 into a
// program's module graph: a koanf v1 project can use it. live.Stats and
// live.Reporter are these types, under their names in package live.
package livestats

import (
	"encoding/json"
	"time"
)

// Stats is a snapshot of what a live config has done, from its Stats
// method (live.Config's, live.Value's). A config's Start counts as its
// first reload, so that once it runs, LastPublished is never zero.
type Stats struct {
	// Name names the config in its log records, errors and metrics: its
	// Name field, or else the paths it watches. A config has it from the
	// moment it is made, before Start.
	Name string

	Published uint64 // configs published, the first included

	// Rejected counts the reloads that failed (Load, Build or Validate)
	// while a config was in force: pushes that the config in force
	// outlived. The attempts of Start and StartWait before the first good
	// config are not counted: retrying Start inflates nothing.
	Rejected uint64

	// LastSucceeded tells whether the last attempt published its config:
	// false before the first good config, and from a rejected push until
	// the next good one. Ready tells whether a config is in force at all.
	LastSucceeded bool

	LastPublished time.Time // when the config in force was published; zero until the first
	LastError     error     // the last failure, naming the config and wrapping the cause; nil if none
	LastErrorTime time.Time // when it happened

	// Identity identifies the config in force across processes: replicas
	// that run the same config show the same Identity, through restarts.
	// It is "hmac-sha256:" and the hex HMAC-SHA256, under the IdentityKey
	// the replicas share, of the JSON of the config in force
	// (json.Marshal(k.Raw()) of its koanf instance); "sha256:" and the
	// plain SHA-256 of the same bytes with PlainIdentity; "" with neither,
	// and until a config is published. See package live's documentation.
	Identity string

	// Comparable tells whether the config has an Identity to compare
	// replicas by, once it has a config in force: whether it was given an
	// IdentityKey (or PlainIdentity). Known before Start. Without one,
	// replicas that run different configs cannot be told apart, and no
	// alert on their disagreement can fire.
	Comparable bool

	// SourceReplaced lists the paths the config watches that are single
	// files mounted on their own (a Kubernetes subPath, docker's -v of a
	// file) whose source was replaced on the host side: no change of them
	// reaches the config until the mount is made again, the container or
	// pod restarted (the provider's Stats.SourceReplaced). Empty, and left
	// out of the JSON, while there is none.
	SourceReplaced []string `json:",omitempty"`
}

// MarshalJSON renders the stats as JSON, with LastError as its text.
func (s Stats) MarshalJSON() ([]byte, error) {
	type plain Stats // without this method
	var lastError string
	if s.LastError != nil {
		lastError = s.LastError.Error()
	}
	return json.Marshal(struct {
		plain
		LastError string
	}{plain(s), lastError})
}

// Reporter is a live config as readiness checks and metrics see it:
// live.Config and live.Value are Reporters.
type Reporter interface {
	Stats() Stats
}
