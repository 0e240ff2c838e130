package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runDocs runs the checker as make test does, from this directory.
func runDocs(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(args, &out, &errOut)
	t.Log("\n" + out.String() + errOut.String())
	return out.String(), errOut.String(), code
}

func TestGoBlocks(t *testing.T) {
	doc, err := os.ReadFile("testdata/repo/docs/guide.md")
	require.NoError(t, err)
	blocks := goBlocks("docs/guide.md", string(doc))
	require.Len(t, blocks, 2)

	b := blocks[0]
	assert.Equal(t, 5, b.line, "the opening fence's line")
	assert.Equal(t, 3, b.indent, "a list item's")
	assert.False(t, b.fragment)
	assert.True(t, strings.HasPrefix(b.src, "// Package roles is an example.\npackage roles\n"), "indentation taken off:\n%s", b.src)
	assert.True(t, strings.HasSuffix(b.src, "}\n"), "up to the closing fence, without it")

	assert.Equal(t, 17, blocks[1].line)
	assert.True(t, blocks[1].fragment)
	assert.Equal(t, []string{"fragment"}, blocks[1].words)

	// Not Go, a fence in a longer fence, a fence never closed.
	blocks = goBlocks("x.md", "```yaml\na: 1\n```\n````go\n```go\n````\n```go\npackage main")
	require.Len(t, blocks, 2)
	assert.Equal(t, "```go\n", blocks[0].src)
	assert.Equal(t, "package main\n", blocks[1].src)
}

// Each failure names the Markdown file, the line (and column) in it, the
// block's line and the compiler's message.
func TestEachFailureIsPlaced(t *testing.T) {
	t.Parallel()
	stdout, stderr, code := runDocs(t, "testdata/broken.md")
	assert.Equal(t, 1, code)
	const f = "tests/docs/testdata/broken.md"
	assert.Equal(t, []string{
		f + ":9:14: undefined: checkPolicy (go block at line 3)",
		f + ":14: not a whole file: begin it with its package clause and imports, or mark it ```go fragment (go block at line 13)",
		f + ":20:8: no required module provides package github.com/knadh/koanf/providers/s3 (for a doc to import it, add it to tests/docs/imports.go and run make tidy) (go block at line 17)",
		f + `:28:26: cannot use "x" (untyped string constant) as int value in return statement (go block at line 25)`,
		f + `:31: unknown word "title=\"main.go\"" after go: the only one is fragment (go block at line 31)`,
		f + ":42:2: undefined: undefinedCall (go block at line 37)",
		f + ":47: function main is undeclared in the main package (go block at line 46)",
		"docs: 7 Go blocks, 0 fragments not compiled, 7 failing, in " + f,
	}, strings.Split(strings.TrimSpace(stdout), "\n"))
	assert.Equal(t, "docs: blocks fail to compile: in "+f+"\n", stderr)
}

// By default: README.md and docs/*.md of the repository; the programs,
// packages and fragments there all pass.
func TestARepositorysDocs(t *testing.T) {
	t.Parallel()
	stdout, _, code := runDocs(t, "-root", "testdata/repo")
	assert.Equal(t, 0, code)
	assert.Equal(t, "docs: 4 Go blocks, 2 fragments not compiled, 0 failing, in README.md, docs/guide.md\n", stdout)

	// No docs/ yet.
	root := t.TempDir()
	readme, err := os.ReadFile("testdata/repo/README.md")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(root, "README.md"), readme, 0o644))
	stdout, _, code = runDocs(t, "-root", root)
	assert.Equal(t, 0, code)
	assert.Equal(t, "docs: 2 Go blocks, 1 fragments not compiled, 0 failing, in README.md\n", stdout)
}

// -allow-broken prints a file's failures without failing the check, and
// no other file's.
func TestAllowBroken(t *testing.T) {
	t.Parallel()
	const f = "tests/docs/testdata/broken.md"
	stdout, _, code := runDocs(t, "-allow-broken", f, "testdata/broken.md", "testdata/repo/README.md")
	assert.Equal(t, 0, code)
	assert.Contains(t, stdout, f+":9:14: undefined: checkPolicy")
	assert.Contains(t, stdout, "docs: the failures in "+f+" do not fail the check (-allow-broken)\n")

	_, stderr, code := runDocs(t, "-allow-broken", "README.md", "testdata/broken.md")
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "in "+f)
}

// Not parallel: it changes the working directory (the parallel tests wait
// for it to end).
func TestUsage(t *testing.T) {
	_, stderr, code := runDocs(t, "testdata/missing.md")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "no such file or directory")

	_, _, code = runDocs(t, "-frobnicate")
	assert.Equal(t, 2, code)

	t.Chdir(t.TempDir())
	_, stderr, code = runDocs(t)
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "run it in tests/docs")
}

// The goleak-clean test docs/semantics.md shows under "Tests" is run, as
// it is there, by tests/koanfv2 (make test-majors): the two must not drift
// apart.
func TestTheDocsCleanTestIsRun(t *testing.T) {
	const name = "func TestReloadEndsWithTheTest("
	fn := func(src string) string {
		t.Helper()
		i := strings.Index(src, name)
		require.GreaterOrEqual(t, i, 0, "no %s", name)
		j := strings.Index(src[i:], "\n}\n")
		require.Greater(t, j, 0)
		return src[i : i+j+3]
	}
	doc, err := os.ReadFile("../../docs/semantics.md")
	require.NoError(t, err)
	var shown string
	for _, b := range goBlocks("docs/semantics.md", string(doc)) {
		if strings.Contains(b.src, name) {
			shown = b.src
		}
	}
	require.NotEmpty(t, shown, "docs/semantics.md shows no %s", name)
	run, err := os.ReadFile("../koanfv2/reload_test.go")
	require.NoError(t, err)
	assert.Equal(t, fn(string(run)), fn(shown))
}

// The certwatcher program docs/kubernetes.md shows is a fragment there
// (this module does not take controller-runtime); tests/certwatcher builds
// it, and this keeps the two the same.
func TestTheCertwatcherProgramIsTheOneBuilt(t *testing.T) {
	doc, err := os.ReadFile("../../docs/kubernetes.md")
	require.NoError(t, err)
	var shown []string
	for _, b := range goBlocks("docs/kubernetes.md", string(doc)) {
		if strings.Contains(b.src, "certwatcher.New(") {
			shown = append(shown, b.src)
		}
	}
	require.Len(t, shown, 1, "one certwatcher program in docs/kubernetes.md")
	built, err := os.ReadFile("../certwatcher/docprogram/main.go")
	require.NoError(t, err)
	_, program, ok := strings.Cut(string(built), "\npackage main\n")
	require.True(t, ok)
	assert.Equal(t, shown[0], "package main\n"+program)
}
