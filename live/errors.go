package live

import (
	"errors"
	"fmt"
)

// ErrRejected means Validate rejected a config or a value; the one in
// force stayed. The error that matches it wraps Validate's error, and
// names the config.
var ErrRejected = errors.New("keepwatch: config rejected")

// What a config's use got wrong; an error names the config (named).
var (
	errNoLoad         = errors.New("no Load")
	errStarted        = errors.New("already started")
	errWasClosed      = errors.New("closed: a config is started once")
	errClosedStarting = errors.New("closed while it started")
	errNotStarted     = errors.New("not started, or closed")
)

// named returns err as an error of the config labelled label: with several
// configs, the error says which.
func named(label string, err error) error {
	return fmt.Errorf("keepwatch: %s: %w", configText(label), err)
}

// The steps of a reload that can fail, as an error tells them.
const (
	stepLoad     = "not loaded"
	stepBuild    = "not built"
	stepValidate = "rejected"
)

// reloadError is a failed reload, as Start, Reload and OnError get it:
// which config, which step, and the cause, which it wraps. A rejection by
// Validate also matches ErrRejected.
type reloadError struct {
	config string // the config's label; "" if it has none
	step   string
	err    error
}

func (e *reloadError) Error() string {
	return "keepwatch: " + configText(e.config) + " " + e.step + ": " + e.err.Error()
}

func (e *reloadError) Unwrap() error { return e.err }

func (e *reloadError) Is(target error) bool {
	return target == ErrRejected && e.step == stepValidate
}

// configText names a config in an error: "config" and its label.
func configText(label string) string {
	if label == "" {
		return "config"
	}
	return "config " + label
}
