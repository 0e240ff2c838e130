package main

import (
	"testing"
	"time"
)

// TestBatchesTalliesEveryUpdate runs the batches command's two processes
// for a few updates: each is tallied once, and each shape ends with its
// close.
func TestBatchesTalliesEveryUpdate(t *testing.T) {
	shapes, err := tallyBatches(t.TempDir(), 20, time.Millisecond, 1024)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for s, n := range shapes {
		total += n
		if s == "" || s[len(s)-1] != 'C' {
			t.Errorf("shape %q does not end with the close", s)
		}
	}
	if total != 20 {
		t.Errorf("%d updates tallied, want 20: %v", total, shapes)
	}
}

func TestShapes(t *testing.T) {
	for _, c := range []struct {
		shape                  string
		writeBefore, modBefore bool
	}{
		{"O|M|MC", false, true},
		{"O|MC", false, false},
		{"OMC", false, false},
		{"O|M|M|C", true, true},
		{"OM|C", true, true},
		{"O|MM|C", true, true},
		{"O|C", false, false},
	} {
		if got := writeBeforeClose(c.shape); got != c.writeBefore {
			t.Errorf("writeBeforeClose(%q) = %v, want %v", c.shape, got, c.writeBefore)
		}
		if got := modifiedBeforeClose(c.shape); got != c.modBefore {
			t.Errorf("modifiedBeforeClose(%q) = %v, want %v", c.shape, got, c.modBefore)
		}
	}
}
