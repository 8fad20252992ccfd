package decision

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestPackageIsPure enforces the dependency rule of the core: non-test files import only the standard
// library (minus os, logging and network), apimachinery's resource package and pressure's core packages,
// and never call time.Now or start goroutines.
func TestPackageIsPure(t *testing.T) {
	checkPure(t, ".")
}

func checkPure(t *testing.T, dir string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	allowed := map[string]bool{"k8s.io/apimachinery/pkg/api/resource": true}
	forbidden := map[string]bool{"os": true, "log": true, "log/slog": true, "net": true, "net/http": true, "os/exec": true}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range file.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			core := strings.HasPrefix(p, "github.com/kube-pressure/pressure/internal/") &&
				!strings.Contains(p, "kubeconv")
			std := !strings.Contains(strings.Split(p, "/")[0], ".")
			if forbidden[p] || !(std || core || allowed[p]) {
				t.Errorf("%s imports %q", f, p)
			}
		}
		ast.Inspect(file, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.GoStmt:
				t.Errorf("%s: goroutine at %s", f, fset.Position(x.Pos()))
			case *ast.SelectorExpr:
				if id, ok := x.X.(*ast.Ident); ok && id.Name == "time" && (x.Sel.Name == "Now" || x.Sel.Name == "Since") {
					t.Errorf("%s: time.%s at %s", f, x.Sel.Name, fset.Position(x.Pos()))
				}
			}
			return true
		})
	}
}
