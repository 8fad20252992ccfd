package archtest

import (
	"encoding/json"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const module = "github.com/kube-pressure/pressure"

type pkg struct {
	ImportPath   string
	Dir          string
	Standard     bool
	Imports      []string
	TestImports  []string
	XTestImports []string
	Deps         []string
	GoFiles      []string
}

// listPackages runs `go list -json` over the module's packages.
func listPackages(t *testing.T) map[string]pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-json", module+"/...")
	cmd.Dir = "../.."
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	pkgs := map[string]pkg{}
	for {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("decoding go list output: %v", err)
		}
		pkgs[p.ImportPath] = p
	}
	return pkgs
}

// pure core packages may import only the standard library, each other, and Quantity.
var corePackages = []string{"signal", "threshold", "rank", "decision", "policy", "explain", "sim", "why", "evidence"}

// coreBannedStd are the standard library packages the core never imports: files, processes, system
// calls, the network and logging belong to the shells. ("net" covers net/http and every net/...)
var coreBannedStd = []string{"os", "os/exec", "io/fs", "syscall", "log", "log/slog", "net"}

func bannedInCore(imp string) bool {
	for _, b := range coreBannedStd {
		if imp == b || strings.HasPrefix(imp, b+"/") {
			return true
		}
	}
	return false
}

var coreAllowed = []string{"k8s.io/apimachinery/pkg/api/resource"}

// pureConverters turn what the shells read into the core's inputs (kubeconv) or read simulate's scenario
// text (scenario). They may import Kubernetes types and parsers, but like the core they never touch
// files, processes, system calls or the network (coreBannedStd).
var pureConverters = []string{"kubeconv", "scenario"}

func TestPureConvertersDoNoIO(t *testing.T) {
	pkgs := listPackages(t)
	for _, name := range pureConverters {
		p, ok := pkgs[module+"/internal/"+name]
		if !ok {
			t.Errorf("package internal/%s not found: update pureConverters", name)
			continue
		}
		for _, imp := range p.Imports {
			if bannedInCore(imp) {
				t.Errorf("%s imports %s: a converter does no I/O, starts no process and does not log", p.ImportPath, imp)
			}
		}
	}
}

func isStd(path string) bool { return !strings.Contains(strings.SplitN(path, "/", 2)[0], ".") }

func TestCorePackagesImportOnlyTheStandardLibraryAndTheCore(t *testing.T) {
	pkgs := listPackages(t)
	for _, name := range corePackages {
		p, ok := pkgs[module+"/internal/"+name]
		if !ok {
			continue // not written yet
		}
		for _, imp := range p.Imports {
			if isStd(imp) {
				if bannedInCore(imp) {
					t.Errorf("%s imports %s: the core does no I/O, starts no process and does not log", p.ImportPath, imp)
				}
				continue
			}
			if strings.HasPrefix(imp, module+"/internal/") && allowedCore(imp) {
				continue
			}
			if contains(coreAllowed, imp) {
				continue
			}
			t.Errorf("%s imports %s: core packages import only the standard library, the core and %v",
				p.ImportPath, imp, coreAllowed)
		}
	}
}

func allowedCore(imp string) bool {
	for _, name := range corePackages {
		if strings.HasPrefix(imp, module+"/internal/"+name) {
			return true
		}
	}
	return false
}

var clockCall = regexp.MustCompile(`\btime\.(Now|Since|Until|Sleep|After|Tick|NewTimer|NewTicker)\(`)

func TestCorePackagesNeverReadTheClockNorStartGoroutines(t *testing.T) {
	pkgs := listPackages(t)
	for _, name := range corePackages {
		p, ok := pkgs[module+"/internal/"+name]
		if !ok {
			continue
		}
		for _, f := range p.GoFiles {
			b, err := os.ReadFile(filepath.Join(p.Dir, f))
			if err != nil {
				t.Fatal(err)
			}
			if m := clockCall.Find(b); m != nil {
				t.Errorf("%s/%s calls %s: time is an argument of the core", p.ImportPath, f, m)
			}
			checkNoGoroutines(t, p.ImportPath+"/"+f, b)
		}
	}
}

func TestNodeSourcesNeverTalkToTheAPIServer(t *testing.T) {
	for path, p := range listPackages(t) {
		if !strings.HasPrefix(path, module+"/internal/source") && !strings.HasPrefix(path, module+"/internal/notify") &&
			!strings.HasPrefix(path, module+"/internal/cgroupkill") &&
			!strings.HasPrefix(path, module+"/internal/reclaim") {
			continue
		}
		for _, d := range p.Deps {
			if strings.HasPrefix(d, "k8s.io/client-go") {
				t.Errorf("%s depends on %s: node sources read the node, never the API", path, d)
			}
		}
	}
}

// forbiddenImports: importer -> packages it must not import (directly).
var forbiddenImports = map[string][]string{
	// The CLI reads the janitor's evidence through internal/evidence, never the janitor's controller.
	"internal/cli": {"internal/janitor"},
}

func TestForbiddenImports(t *testing.T) {
	pkgs := listPackages(t)
	for importer, banned := range forbiddenImports {
		p, ok := pkgs[module+"/"+importer]
		if !ok {
			t.Errorf("package %s not found: update forbiddenImports", importer)
			continue
		}
		imports := append(append(append([]string{}, p.Imports...), p.TestImports...), p.XTestImports...)
		for _, b := range banned {
			if contains(imports, module+"/"+b) {
				t.Errorf("%s (or its tests) imports %s", p.ImportPath, b)
			}
		}
	}
}

func TestMainModuleNeverImportsKubernetes(t *testing.T) {
	for path, p := range listPackages(t) {
		for _, d := range p.Deps {
			if d == "k8s.io/kubernetes" || strings.HasPrefix(d, "k8s.io/kubernetes/") {
				t.Errorf("%s depends on %s: use the staging modules", path, d)
			}
		}
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// checkNoGoroutines fails when the source starts a goroutine: the core is synchronous.
func checkNoGoroutines(t *testing.T, name string, src []byte) {
	t.Helper()
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, name, src, 0)
	if err != nil {
		t.Fatalf("parse %s: %v", name, err)
	}
	ast.Inspect(file, func(n ast.Node) bool {
		if g, ok := n.(*ast.GoStmt); ok {
			t.Errorf("%s: goroutine at %s: the core is synchronous", name, fset.Position(g.Pos()))
		}
		return true
	})
}
