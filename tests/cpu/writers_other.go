//go:build !linux

package main

import (
	"errors"
	"fmt"
)

// The writers command is Linux's: leases, /proc/locks.
const (
	roleWatching = "watching"
	roleRewrite  = "rewrite"
)

func runWriters([]string) error {
	return errors.New("the writers command is Linux only")
}

func runWritersChild(role string, _ []string) error {
	return fmt.Errorf("%w %q", errUnknownRole, role)
}
