package live

import (
	"encoding/json"
	"time"
)

// Stats is a snapshot of what a live config has done, from [Config.Stats]
// or [Value.Stats]. A config's Start counts as its first reload, so that
// once it runs, LastPublished is never zero.
type Stats struct {
	// Name names the config in its log records, errors and metrics: its
	// Name field, or else the paths it watches. "" before Start.
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
	// plain SHA-256 of the same bytes with PlainIdentity; "" with neither.
	// See the package documentation.
	Identity string
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
// [*Config] and [*Value] are Reporters.
type Reporter interface {
	Stats() Stats
}
