package live

import (
	"encoding/json"
	"time"
)

// Stats is a snapshot of what a live config has done, from [Config.Stats]
// or [Value.Stats].
type Stats struct {
	Published     uint64    // snapshots published, the first included
	Rejected      uint64    // reloads that failed (Load, Build or Validate), a failed Start's included
	LastPublished time.Time // when the snapshot in force was published
	LastError     error     // the last failure, naming the config and wrapping the cause; nil if none
	LastErrorTime time.Time // when it happened
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
