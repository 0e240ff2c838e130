package tlscert

import (
	"encoding/json"
	"time"

	"github.com/keepwatch/file"
)

// Stats is a snapshot of what a [Watcher] has done. Nothing in it is
// derived from the key. The counters cover the watcher's life, so they
// suit monitoring systems that expect counters to only grow. An alert on
// certwatcher's certwatcher_read_certificate_errors_total rising is one on
// Rejected here; certwatcher's reads count its 10 s polls too, where
// Loaded and Rejected count the pairs that changed.
type Stats struct {
	Loaded        uint64     // pairs put in force, the first one's included
	Rejected      uint64     // pairs refused: the one in force stayed
	LastLoaded    time.Time  // when the pair in force was put in force
	LastError     error      // why the last refused pair was refused; nil if none was
	LastErrorTime time.Time  // when it was refused
	NotAfter      time.Time  // when the certificate in force expires
	Files         file.Stats // the watch of the files: how it watches, its problems, the kubelet generation read
}

// MarshalJSON renders the stats as JSON, with LastError as its text, so
// that they can be published as they are (expvar, a status endpoint).
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
