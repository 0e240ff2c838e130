package main

import (
	"strings"
	"testing"
	"time"
)

// Every way the stock provider can fare on a row gets a cell that says
// it, and a note that says why where the row alone does not.
func TestStockFateExplainsEachRow(t *testing.T) {
	kubelet := step{dies: kubeletRace}
	blind := step{blind: "it sees nothing"}
	died := stockFate{diedAt: 4, lastErr: "lstat <volume>/..2026/config.yaml: no such file or directory"}
	for _, c := range []struct {
		name       string
		fate       stockFate
		s          step
		row        int
		r          result
		cell, note string
	}{
		{"delivered", stockFate{}, kubelet, 1, result{ok: true, latency: time.Millisecond}, "yes    1.0 ms", ""},
		{"delivered, then died", died, kubelet, 4, result{ok: true, latency: time.Millisecond},
			"yes    1.0 ms  then its watch ended", " Stock: " + kubeletRace + ". Its watch ended just after the reload; its callback's last error: \"lstat <volume>/..2026/config.yaml: no such file or directory\"."},
		{"died", died, kubelet, 4, result{}, "NO   its watch ended", " Stock: " + kubeletRace + ". Its callback's last error: \"lstat <volume>/..2026/config.yaml: no such file or directory\"."},
		{"dead before", died, kubelet, 6, result{}, "NO   its watch ended at 4", ""},
		{"blind", stockFate{}, blind, 2, result{}, "NO   saw nothing", " Stock: it sees nothing."},
		{"late", stockFate{}, kubelet, 3, result{}, "NO   nothing within 1 s", ""},
	} {
		cell, note := c.fate.explain(c.s, c.row, c.r)
		if cell != c.cell || note != c.note {
			t.Errorf("%s: got %q, %q; want %q, %q", c.name, cell, note, c.cell, c.note)
		}
	}
}

func TestWrapIndentsUnderItsPrefix(t *testing.T) {
	got := wrap("9. ", strings.Repeat("word ", 12), 24)
	want := "9. word word word word\n   word word word word\n   word word word word\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
