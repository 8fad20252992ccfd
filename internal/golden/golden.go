package golden

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var rewrite = flag.Bool("rewrite", false, "rewrite golden files and scenario expectations in testdata from the actual output")

// Rewrite reports whether -rewrite was given.
func Rewrite() bool { return *rewrite }

// Check compares got with the golden file at path; with -rewrite it writes got there first.
func Check(t testing.TB, path string, got string) {
	t.Helper()
	if *rewrite {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -rewrite to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("output differs from %s (-want +got), rerun with -rewrite if intended:\n%s", path, diff)
	}
}

// RunScripts runs every script matching glob, one subtest each, with exec interpreting one command line
// of a fresh machine (newExec is called per script). A command with output is followed by a "----"
// line and the expected output, which ends at a blank line; lines starting with # are comments. With
// -rewrite the expected output is replaced by the actual one.
func RunScripts(t *testing.T, glob string, newExec func() func(cmd string) (string, error)) {
	files, err := filepath.Glob(glob)
	if err != nil || len(files) == 0 {
		t.Fatalf("no scripts match %s: %v", glob, err)
	}
	for _, path := range files {
		t.Run(strings.TrimSuffix(filepath.Base(path), filepath.Ext(path)), func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Script(string(data), newExec())
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

// Script executes a script and returns it with every expected output replaced by the actual one.
// After a command with output, an old expected block ("----" up to a blank line) or a single blank line
// is replaced by the fresh output and one blank line.
func Script(script string, exec func(cmd string) (string, error)) (string, error) {
	var out strings.Builder
	lines := strings.Split(strings.TrimRight(script, "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		out.WriteString(line + "\n")
		cmd := strings.TrimSpace(line)
		if cmd == "" || strings.HasPrefix(cmd, "#") {
			continue
		}
		res, err := exec(cmd)
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
