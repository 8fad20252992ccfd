package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestREADMESampleIsRealOutput keeps the README's sample of explain's text output real: its lines are
// those of the seed snapshot's golden text, in order, "  ..." standing for lines left out.
func TestREADMESampleIsRealOutput(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(readme), "What `explain` prints")
	if !ok {
		t.Fatal("README.md: no sample of explain's output (\"What `explain` prints\")")
	}
	_, block, _ := strings.Cut(after, "```\n")
	block, _, _ = strings.Cut(block, "```")
	// The README runs it from the repository's root, the golden file from this package's directory.
	block = strings.ReplaceAll(block, "snapshot internal/cli/testdata/", "snapshot testdata/")
	sample := strings.Split(strings.TrimRight(block, "\n"), "\n")
	golden := strings.Split(readFile(t, filepath.Join("testdata", "golden", "seed.txt")), "\n")
	if len(sample) < 20 {
		t.Fatalf("README sample has %d lines, want the explain sample", len(sample))
	}
	g, skip := 0, false
	for i, line := range sample {
		if strings.TrimSpace(line) == "..." || (skip && line == "") { // "..." and the blank lines after it
			skip = true
			continue
		}
		for skip && g < len(golden) && golden[g] != line {
			g++
		}
		if g == len(golden) || golden[g] != line {
			want := "the end of the output"
			if g < len(golden) {
				want = fmt.Sprintf("%q", golden[g])
			}
			t.Fatalf("README sample line %d %q is not the real output's next line (testdata/golden/seed.txt): %s", i+1, line, want)
		}
		g, skip = g+1, false
	}
}
