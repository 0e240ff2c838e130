package live

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// ErrNotReady means a live config has no good config in force yet: it
// was not started, or its first load has not succeeded. The error that
// matches it names the config, and wraps the last attempt's error, if any.
var ErrNotReady = errors.New("keepwatch: config not ready")

// notReadyError is Ready's error.
type notReadyError struct {
	config string
	last   error // the last attempt's failure; nil if none was made
}

func (e *notReadyError) Error() string {
	s := "keepwatch: " + configText(e.config) + " not ready: no good config yet"
	if e.last != nil {
		s += ": " + e.last.Error()
	}
	return s
}

func (e *notReadyError) Unwrap() []error {
	if e.last == nil {
		return []error{ErrNotReady}
	}
	return []error{ErrNotReady, e.last}
}

// ready is Ready of a live config with these stats.
func ready(st Stats) error {
	if st.Published > 0 {
		return nil
	}
	return &notReadyError{config: st.Name, last: st.LastError}
}

// ReadyHandler returns an http.Handler for a readiness probe (/readyz): it
// answers 200 once every config given has a good config in force, and 503
// until then. A config stays ready when a push is rejected: the config in
// force serves on, and the push reaches every replica at once, so failing
// readiness on it would take every replica out of the Service at once.
//
// The body has a line for each config: "ok" or "waiting", its name, and
// what it knows: when the config in force was published, its Identity,
// when the last reload failed, if it did since, and which of its files is
// a single file mounted on its own whose source was replaced (their
// changes no longer arrive; Stats.SourceReplaced). Error texts are left
// out, because a parse or decode error may quote a value from the file, a
// Secret's too: they are in the log and in Stats.
func ReadyHandler(configs ...Reporter) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		var b strings.Builder
		code := http.StatusOK
		for _, c := range configs {
			st := c.Stats()
			if ready(st) != nil {
				code = http.StatusServiceUnavailable
			}
			b.WriteString(readyLine(st))
			b.WriteByte('\n')
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(code)
		fmt.Fprint(w, b.String())
	})
}

// readyLine says what a readiness probe may know of one config.
func readyLine(st Stats) string {
	name := st.Name
	if name == "" {
		name = "(unnamed)" // a Reporter of another kind
	}
	if st.Published == 0 {
		s := "waiting " + name + ": no good config yet"
		if st.LastError != nil {
			s += "; the last attempt failed at " + stamp(st.LastErrorTime) + " (the error is in the log)"
		}
		return s + replaced(st)
	}
	s := "ok      " + name + ": in force since " + stamp(st.LastPublished)
	switch {
	case st.Identity != "":
		s += ", " + st.Identity
	case !st.Comparable:
		s += ", no identity: replicas cannot be compared"
	}
	if !st.LastSucceeded {
		s += "; a reload failed at " + stamp(st.LastErrorTime) + " and was rejected, the config in force stays (the error is in the log)"
	}
	return s + replaced(st)
}

// replaced says which of the config's files are single files mounted on
// their own whose source was replaced: their changes no longer arrive.
// The config in force serves on, so it stays ready.
func replaced(st Stats) string {
	var s string
	for _, p := range st.SourceReplaced {
		s += "; " + p + ": its mount's source was replaced, its changes no longer arrive until a restart (the log says more)"
	}
	return s
}

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z07:00") }
