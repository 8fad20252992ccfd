package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestExplainOutputsThroughKubectlPrinters(t *testing.T) {
	seed := filepath.Join("testdata", "snapshots", "seed")
	for _, tc := range []struct {
		name, output, want string
	}{
		{"jsonpath reads one field", "jsonpath={.kubelet.evictionOrder[0].pod}", "default/a"},
		{"jsonpath ranges over the order", `jsonpath={range .kubelet.evictionOrder[*]}{.pod}{"\n"}{end}`,
			"default/a\ndefault/b\ndefault/c\n"},
		{"go-template ranges over the signals", `go-template={{range .signals}}{{if .met}}{{.signal}} {{end}}{{end}}`,
			"memory.available "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := runCLI(t, "explain", "--snapshot", seed, "-o", tc.output)
			if err != nil {
				t.Fatalf("-o %s: %v", tc.output, err)
			}
			if out != tc.want {
				t.Errorf("-o %s = %q, want %q", tc.output, out, tc.want)
			}
		})
	}
	if _, err := runCLI(t, "explain", "--snapshot", seed, "-o", "jsonpath={.kubelet.evictionOrder[0].pod"); err == nil {
		t.Errorf("-o with an unterminated jsonpath succeeded, want an error")
	}
}

func TestTextWrapsAtColumnsAndWideDoesNot(t *testing.T) {
	seed := filepath.Join("testdata", "snapshots", "seed")
	t.Setenv("COLUMNS", "80")
	t.Setenv("NO_COLOR", "")
	text, err := runCLI(t, "explain", "--snapshot", seed)
	if err != nil {
		t.Fatal(err)
	}
	wide, err := runCLI(t, "explain", "--snapshot", seed, "-o", "wide")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(text, "\x1b[") || strings.Contains(wide, "\x1b[") {
		t.Errorf("colour escapes written to a non-terminal")
	}
	prose := "memory eviction starts when the pods' working set exceeds 12.9Gi"
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "memory eviction starts") && len([]rune(line)) > 80 {
			t.Errorf("prose line of %d columns with COLUMNS=80: %q", len([]rune(line)), line)
		}
	}
	if !strings.Contains(wide, prose) || !hasLongerLine(wide, 80) {
		t.Errorf("-o wide wrapped its prose, want one line per explanation:\n%s", wide)
	}
	// The same words, only the line breaks differ.
	if strings.Join(strings.Fields(text), " ") != strings.Join(strings.Fields(wide), " ") {
		t.Errorf("wrapped text and wide differ in more than line breaks")
	}
}

func hasLongerLine(s string, n int) bool {
	for _, l := range strings.Split(s, "\n") {
		if len([]rune(l)) > n {
			return true
		}
	}
	return false
}
