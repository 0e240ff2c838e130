package main

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"strings"
	"testing"
)

// The testing package's one-update run (run 1) and two measured runs of
// four updates per provider.
const samples = `kubelet 1 1 stock 999000000 999000000
kubelet 1 1 keepwatch 999000000 999000000
kubelet 2 4 stock 100000 300000
kubelet 2 4 keepwatch 200000 250000
kubelet 2 4 stock 110000 310000
kubelet 2 4 keepwatch 210000 260000
kubelet 2 4 stock missed
kubelet 2 4 keepwatch 220000 270000
kubelet 2 4 stock 120000 320000
kubelet 2 4 keepwatch 230000 280000
inplace 3 4 stock -5000 200000
inplace 3 4 keepwatch 40000 240000
inplace 3 4 stock 50000 210000
inplace 3 4 keepwatch -20000 -1000
inplace 3 4 stock missed
inplace 3 4 keepwatch 60000 260000
inplace 3 4 stock missed
inplace 3 4 keepwatch 70000 270000
kubelet 4 4 stock 130000 330000
kubelet 4 4 keepwatch 240000 290000
kubelet 4 4 stock 140000 340000
kubelet 4 4 keepwatch 250000 300000
kubelet 4 4 stock 150000 350000
kubelet 4 4 keepwatch 260000 310000
kubelet 4 4 stock 160000 360000
kubelet 4 4 keepwatch 270000 320000
`

func TestParse(t *testing.T) {
	d, err := parse(strings.NewReader(samples))
	if err != nil {
		t.Fatal(err)
	}
	if d.runs["kubelet"] != 2 || d.updates["kubelet"] != 4 {
		t.Errorf("kubelet: %d runs of %d updates, want 2 of 4 (the one-update run left out)", d.runs["kubelet"], d.updates["kubelet"])
	}
	st := d.sides["kubelet"]["stock"]
	if st.missed != 1 || len(st.figs[0]) != 7 || st.figs[0][0] != 0.1 || st.figs[1][6] != 0.36 {
		t.Errorf("kubelet, stock: %+v", st)
	}
	if p := percentile(st.figs[0], 0.5); p != 0.13 {
		t.Errorf("p50 = %v, want 0.13", p)
	}
	if n := countAtMost(d.sides["inplace"]["keepwatch"].figs[0], 0); n != 1 {
		t.Errorf("%d in-place deliveries before the close, want 1", n)
	}
}

func TestParseErrors(t *testing.T) {
	for _, in := range []string{"", "# only a comment\n"} {
		if _, err := parse(strings.NewReader(in)); !errors.Is(err, errNoSamples) {
			t.Errorf("%q: %v, want errNoSamples", in, err)
		}
	}
	for _, in := range []string{"kubelet 1 4 stock 100\n", "kubelet x 4 stock 1 2\n", "kubelet 1 4 stock lost\n"} {
		if _, err := parse(strings.NewReader(in)); err == nil || errors.Is(err, errNoSamples) {
			t.Errorf("%q: %v, want a line error", in, err)
		}
	}
}

func TestDraw(t *testing.T) {
	d, err := parse(strings.NewReader(samples))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	draw(&buf, d, "a note")
	// Well-formed XML.
	dec := xml.NewDecoder(bytes.NewReader(buf.Bytes()))
	for {
		if _, err := dec.Token(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("not well-formed: %v", err)
		}
	}
	svg := buf.String()
	for _, want := range []string{
		"kubelet 2 × 4, inplace 1 × 4",
		"a note",
		"stock: p50 0.130, p99 0.160 ms; 1 of 8 missed",
		"keepwatch: p50 0.240, p99 0.270 ms",
		"not measured", // rename
		"at most 0.01 ms, at the left edge: stock 1, keepwatch 1",
	} {
		if !strings.Contains(svg, want) {
			t.Errorf("the SVG has no %q", want)
		}
	}
}
