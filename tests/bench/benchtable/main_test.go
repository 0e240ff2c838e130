package main

import (
	"strings"
	"testing"
)

// Three runs of BenchmarkLatency's kubelet scenario and one other
// benchmark, as go test -bench prints them.
const input = `goos: linux
BenchmarkLatency/kubelet-2   200   7000000 ns/op   0.20 keepwatch-entry-p50-ms   0.40 keepwatch-entry-p99-ms   0.30 keepwatch-loaded-p50-ms   0.60 keepwatch-loaded-p99-ms   0 keepwatch-missed   0.10 stock-entry-p50-ms   0.50 stock-entry-p99-ms   0.30 stock-loaded-p50-ms   0.90 stock-loaded-p99-ms   1 stock-missed   0 stock-partial   1 stock-restarts
BenchmarkLatency/kubelet-2   200   7000000 ns/op   0.22 keepwatch-entry-p50-ms   0.70 keepwatch-entry-p99-ms   0.33 keepwatch-loaded-p50-ms   0.80 keepwatch-loaded-p99-ms   0 keepwatch-missed   0.11 stock-entry-p50-ms   0.60 stock-entry-p99-ms   0.30 stock-loaded-p50-ms   1.00 stock-loaded-p99-ms   0 stock-missed   0 stock-partial   0 stock-restarts
BenchmarkLatency/kubelet-2   200   7000000 ns/op   0.18 keepwatch-entry-p50-ms   0.45 keepwatch-entry-p99-ms   0.27 keepwatch-loaded-p50-ms   0.70 keepwatch-loaded-p99-ms   0 keepwatch-missed   0.12 stock-entry-p50-ms   0.55 stock-entry-p99-ms   0.30 stock-loaded-p50-ms   0.95 stock-loaded-p99-ms   2 stock-missed   0 stock-partial   2 stock-restarts
BenchmarkRecheckCost-2       1000000   1700 ns/op
PASS
`

func table(t *testing.T) string {
	t.Helper()
	r, err := parse(strings.NewReader(input))
	if err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	writeLatency(&sb, r)
	write(&sb, r)
	return sb.String()
}

func TestLatencyTable(t *testing.T) {
	out := table(t)
	for _, want := range []string{
		"200 updates each per scenario per run, medians of 3 runs (min–max)",
		// Medians and spreads; the ratio is the median of the runs' own
		// ratios (2.00, 2.00, 1.50), not the ratio of the medians.
		"| kubelet `..data` swap | → callback entry, p50 | 0.110 ms (0.100–0.120) | 0.200 ms (0.180–0.220) | 2.00× (1.50–2.00) | stock 3, keepwatch 0 |",
		"| | → callback entry, p99 | 0.550 ms (0.500–0.600) | 0.450 ms (0.400–0.700) | 0.82× (0.80–1.17) | stock 1, keepwatch 2 |",
		"| | → config loaded, p50 | 0.300 ms | 0.300 ms (0.270–0.330) | 1.00× (0.90–1.10) | stock 1, keepwatch 1, tied 1 |",
		"| kubelet `..data` swap | stock | 1 (0–2) of 200 | 1 (0–2) | 0 | - |",
		"| | keepwatch | 0 of 200 | - | - | - |",
		"| one idle re-check (a stat and a compare) | 1700 ns | no re-check |  |",
	} {
		want = strings.ReplaceAll(want, "| |", "|  |")
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	if strings.Contains(out, "rename-over") {
		t.Errorf("a scenario that did not run has rows:\n%s", out)
	}
}

func TestNoLatency(t *testing.T) {
	r, err := parse(strings.NewReader("BenchmarkRecheckCost-2 100 1700 ns/op\n"))
	if err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	writeLatency(&sb, r)
	if sb.Len() != 0 {
		t.Errorf("latency tables without BenchmarkLatency:\n%s", sb.String())
	}
}
