package file

import (
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The judge decides and does no I/O: its files import nothing that reads
// the disk or the notifier, and never read the clock (time is handed in).
// (What it calls of the package's other files reads FileInfo values it is
// handed.)
func TestTheJudgeDoesNoIO(t *testing.T) {
	allowed := []string{"io/fs", "slices", "time"}
	for _, name := range []string{"judge.go", "judge_read.go", "classify.go", "due.go", "writer_wait.go", "wait.go", "facts.go"} {
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
		require.NoError(t, err)
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			assert.True(t, slices.Contains(allowed, p), "%s imports %s", name, p)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if x, ok := sel.X.(*ast.Ident); ok && x.Name == "time" {
					assert.NotContains(t, []string{"Now", "Since", "Until", "Sleep", "After", "NewTimer", "AfterFunc", "Tick", "NewTicker"},
						sel.Sel.Name, "%s reads the clock: time.%s", name, sel.Sel.Name)
				}
			}
			return true
		})
	}
}
