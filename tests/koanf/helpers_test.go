package koanf_test

import (
	"context"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Helpers for the tests of this module's own (not koanf's, which are
// koanf_test.go as koanf has them), as the root package's tests have them.

// waitFor is how long a test waits for something that should take
// milliseconds: generous, so that a loaded 2-core machine never fails a
// correct test.
const waitFor = 10 * time.Second

// tick is how often a test looks again while it waits.
const tick = 2 * time.Millisecond

// write writes a file in place.
func write(t testing.TB, path, data string) {
	t.Helper()
	require.NoError(t, os.WriteFile(path, []byte(data), 0o644))
}

// replace replaces a file the way editors and kubelet do: write aside,
// rename over.
func replace(t testing.TB, path, data string) {
	t.Helper()
	write(t, path+".tmp", data)
	require.NoError(t, os.Rename(path+".tmp", path))
}

// shutdown stops a watch and waits for its goroutine.
func shutdown(t testing.TB, w interface{ Shutdown(context.Context) error }) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	require.NoError(t, w.Shutdown(ctx))
}

// testLogger sends the provider's log to the test's log, shown on failure.
func testLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(string(p[:len(p)-1]))
	return len(p), nil
}
