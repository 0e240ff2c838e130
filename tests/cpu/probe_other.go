//go:build !linux

package main

import (
	"errors"
	"fmt"
)

// runProbe is Linux's: leases are fcntl(F_SETLEASE).
func runProbe([]string) error {
	return errors.New("the lease probe is Linux only")
}

func runProbeChild(role string, _ []string) error {
	return fmt.Errorf("%w %q", errUnknownRole, role)
}
