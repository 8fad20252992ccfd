package decision

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the expected output of testdata/*.txt scenarios")

// TestScenarios runs every testdata/*.txt script (see machine for the language). A command with output is
// followed by a "----" line and the expected output, which ends at a blank line. Run with -rewrite to
// regenerate the expected output; only keep changes you understand.
func TestScenarios(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenarios: %v", err)
	}
	for _, path := range files {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txt"), func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			got, err := runScript(string(data))
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			if *rewrite {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if diff := cmp.Diff(got, string(data)); diff != "" {
				t.Errorf("%s (-got +want), rerun with -rewrite if intended:\n%s", path, diff)
			}
		})
	}
}

// runScript executes a script and returns it with every expected output replaced by the actual one.
// After a command with output, an old expected block ("----" up to a blank line) or a single blank line
// is replaced by the fresh output and one blank line.
func runScript(script string) (string, error) {
	m := newMachine()
	var out strings.Builder
	lines := strings.Split(strings.TrimRight(script, "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		out.WriteString(line + "\n")
		cmd := strings.TrimSpace(line)
		if cmd == "" || strings.HasPrefix(cmd, "#") {
			continue
		}
		res, err := m.run(cmd)
		if err != nil {
			return "", fmt.Errorf("line %d %q: %w", i+1, line, err)
		}
		if res == "" {
			continue
		}
		out.WriteString("----\n" + res + "\n")
		switch {
		case i+1 < len(lines) && lines[i+1] == "----":
			for i++; i < len(lines) && lines[i] != ""; i++ {
			}
		case i+1 < len(lines) && lines[i+1] == "":
			i++
		}
	}
	return strings.TrimRight(out.String(), "\n") + "\n", nil
}
