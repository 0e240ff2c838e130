package osfile

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
)

// The errno classes find an errno wherever errors.Is would: anywhere in an
// error's tree, an error that joins several among them, not only the first
// one found.
func TestAnErrnoCountsAnywhereInTheErrorsTree(t *testing.T) {
	gone := &fs.PathError{Op: "open", Path: "a.yaml", Err: syscall.ENOENT}
	busy := &fs.PathError{Op: "open", Path: "b.yaml", Err: syscall.EMFILE}
	for _, err := range []error{errors.Join(gone, busy), fmt.Errorf("read: %w", errors.Join(gone, busy))} {
		assert.True(t, Vanished(err), "%v", err)
		assert.True(t, ProcessError(err), "%v: errors.Is(err, EMFILE)", err)
		assert.True(t, Limited(err), "%v", err)
		assert.True(t, EventsUnavailable(err), "%v", err)
		assert.False(t, Refused(err), "%v", err)
	}
	assert.True(t, ProcessError(fmt.Errorf("read: %w", busy)))
	assert.False(t, ProcessError(gone))
	assert.False(t, ProcessError(errors.New("keepwatch: other")))
	assert.False(t, ProcessError(nil))
}
