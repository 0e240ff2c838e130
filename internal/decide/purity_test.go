package decide

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The compiler keeps the package from I/O (it imports nothing that does
// any); this keeps it from the clock, which package time would let it
// read: the time of every input is handed in.
func TestTheDeciderNeverReadsTheClock(t *testing.T) {
	files, err := os.ReadDir(".")
	require.NoError(t, err)
	clock := []string{"Now", "Since", "Until", "Sleep", "After", "NewTimer", "AfterFunc", "Tick", "NewTicker"}
	for _, e := range files {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
		require.NoError(t, err)
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if x, ok := sel.X.(*ast.Ident); ok && x.Name == "time" {
					assert.NotContains(t, clock, sel.Sel.Name, "%s reads the clock: time.%s", name, sel.Sel.Name)
				}
			}
			return true
		})
	}
}
