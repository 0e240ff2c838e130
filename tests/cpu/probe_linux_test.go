package main

import (
	"os"
	"testing"
)

// TestProbeAnswers checks the kernel's answers to the lease probe that
// make bench-probe reports: the facts keepwatch is to build on.
func TestProbeAnswers(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := probeDir(os.TempDir()) // where nobody may go: t.TempDir's parent is root's alone
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	rows, err := answers(self, dir, dir+"/config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if rows[0].answer == "EINVAL" {
		t.Skip("leases are off or unsupported here")
	}
	for _, r := range rows {
		if r.answer != r.expected && !(os.Getuid() != 0 && r.expected == "EACCES") {
			t.Errorf("%s: %s, want %s", r.name, r.answer, r.expected)
		}
	}
}
