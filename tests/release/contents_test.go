package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	modzip "golang.org/x/mod/zip"
)

// TestCheckContents: a published module holding a built binary, of any
// size, or a file over maxFileSize is refused, and each is named; text,
// however it begins, is not.
func TestCheckContents(t *testing.T) {
	dir := t.TempDir()
	file := func(name string, data []byte) modzip.File {
		abs := filepath.Join(dir, name)
		if err := os.WriteFile(abs, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return treeFile{path: name, abs: abs}
	}
	text := []modzip.File{
		file("doc.go", []byte("package file\n")),
		file("empty", nil),
		file("notes.md", []byte("M\n")),
	}
	if err := checkContents(text); err != nil {
		t.Fatalf("text refused: %v", err)
	}
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"keepwatch", []byte("\x7fELF\x02\x01\x01"), "keepwatch: a built binary"},
		{"keepwatch.exe", []byte("MZ\x90\x00"), "keepwatch.exe: a built binary"},
		{"darwin", []byte{0xcf, 0xfa, 0xed, 0xfe, 7, 0, 0, 1}, "darwin: a built binary"},
		{"pkg.a", []byte("!<arch>\n__.PKGDEF"), "pkg.a: a built binary"},
		{"cpu.prof", make([]byte, maxFileSize+1), "cpu.prof: 1048577 bytes, over 1048576"},
	} {
		err := checkContents(append(text, file(tc.name, tc.data)))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error naming %q", tc.name, err, tc.want)
		}
	}
}
