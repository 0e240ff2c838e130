//go:build !linux && !darwin

package file

import "errors"

// exchange swaps two names at once where the OS can; here it cannot.
func exchange(_, _ string) error { return errors.ErrUnsupported }
