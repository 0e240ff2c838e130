package osfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzReadFile checks the size limit: the whole file up to the limit, a
// clear error past it, never more than limit+1 bytes read.
func FuzzReadFile(f *testing.F) {
	f.Add(uint16(0), uint16(0))
	f.Add(uint16(100), uint16(99))
	f.Add(uint16(4096), uint16(4096))
	f.Fuzz(func(t *testing.T, size, limit uint16) {
		path := filepath.Join(t.TempDir(), "f")
		data := strings.Repeat("x", int(size))
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		c, err := ReadFile(path, "f", int64(limit), false)
		switch {
		case int(size) <= int(limit) && (err != nil || string(c.Data) != data):
			t.Fatalf("size %d, limit %d: %v", size, limit, err)
		case int(size) > int(limit) && !errors.Is(err, ErrTooLarge):
			t.Fatalf("size %d, limit %d: want ErrTooLarge, got %v", size, limit, err)
		}
	})
}
