//go:build unix

package k8smount_test

import (
	"fmt"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/keepwatch/file"
	"github.com/keepwatch/file/k8smount"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A key that is a FIFO is refused, not read forever.
func TestAFIFOIsRefused(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644))
	_, err := k8smount.Provider(dir, ".", k8smount.Opt{}).Read()
	assert.ErrorIs(t, err, file.ErrNotRegularFile)
	assert.ErrorContains(t, err, fmt.Sprintf("failed to read configuration from mount: %q: ", dir))
}
