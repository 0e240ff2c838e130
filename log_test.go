package file

import (
	"context"
	"fmt"
	"github.com/keepwatch/file/internal/decide"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
)

// logRecords is a slog.Handler that keeps the level and message of each
// record.
type logRecords struct {
	mu   sync.Mutex
	recs []slog.Record
}

func (l *logRecords) Enabled(context.Context, slog.Level) bool { return true }
func (l *logRecords) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *logRecords) WithGroup(string) slog.Handler            { return l }
func (l *logRecords) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.recs = append(l.recs, r)
	return nil
}

// at returns "LEVEL message" of each record at level or above.
func (l *logRecords) at(level slog.Level) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, r := range l.recs {
		if r.Level >= level {
			out = append(out, r.Level.String()+" "+r.Message)
		}
	}
	return out
}

// The log holds one record per state change: not one per raw event, and
// not one per retry of the same problem. What goes well is at DEBUG; what
// goes wrong at WARN, and its end at INFO.
func TestLogHasOneRecordPerStateChange(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "config.yaml")
		write(t, path, "v1\n")
		logs := &logRecords{}
		_, r, fs := watchedFake(t, path, WithLogger(slog.New(logs)))
		assert.Equal(t, []string{"DEBUG keepwatch: watch started"}, logs.at(slog.LevelDebug))

		// A burst of events, one delivery.
		n := fs.last()
		for i := range 20 {
			replace(t, path, fmt.Sprintf("v%d\n", i+2))
		}
		for range 20 {
			send(n, path, decide.OpCreate)
			send(n, path, decide.OpAttrib)
		}
		advance(time.Second)
		assert.Equal(t, []string{"DEBUG keepwatch: watch started", "DEBUG keepwatch: update delivered"},
			logs.at(slog.LevelDebug), "calls: %s", r)
		assert.Empty(t, logs.at(slog.LevelInfo), "a healthy watch says nothing at INFO")

		// The watch breaks and stays broken for five attempts: one warning,
		// then one record when it is re-armed.
		fs.set(func(fs *fakes) {
			fs.newErrs = slices.Repeat([]error{syscall.EIO}, 4)
		})
		n.fail(syscall.EIO)
		advance(10 * testBackoffMax)
		assert.Equal(t, []string{
			"WARN keepwatch: watch interrupted",
			"INFO keepwatch: watch re-armed",
		}, logs.at(slog.LevelInfo))
		assert.Len(t, logs.at(slog.LevelDebug), 8, "each retry at debug level: %v", logs.at(slog.LevelDebug))

		// Missing, then back.
		_ = os.Remove(path)
		send(fs.last(), path, decide.OpRemove)
		advance(time.Second)
		write(t, path, "v9\n")
		send(fs.last(), path, decide.OpCreate)
		advance(time.Second)
		assert.Equal(t, []string{
			"WARN keepwatch: watch interrupted",
			"INFO keepwatch: watch re-armed",
			"WARN keepwatch: file problem",
			"INFO keepwatch: file back",
		}, logs.at(slog.LevelInfo))
	})
}
