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

// TestMachineOutputsSayTheWarningsOnStderr: json, yaml and the template outputs carry the warnings in
// the report (or drop them, -o jsonpath), so they are also said on stderr, as kubectl says its
// warnings; text and wide show them in their WARNINGS section only.
func TestMachineOutputsSayTheWarningsOnStderr(t *testing.T) {
	dir := copySeed(t, func(f map[string]string) {
		replace(t, f, FileNode, `"kubeletVersion": "v1.36.3"`, `"kubeletVersion": "v1.31.2"`)
	})
	want := "Warning: " + filepath.Join(dir, FileNode) + `: status.nodeInfo.kubeletVersion: kubelet version "v1.31.2"`
	for _, output := range []string{"json", "yaml", "jsonpath={.node}", "go-template={{.node}}", "text", "wide"} {
		out, stderr, err := runCLIStderr(t, "explain", "--snapshot", dir, "-o", output)
		if err != nil {
			t.Fatalf("-o %s: %v", output, err)
		}
		machine := output != "text" && output != "wide"
		if got := strings.Contains(stderr, want); got != machine {
			t.Errorf("-o %s: warning on stderr = %v, want %v; stderr:\n%s", output, got, machine, stderr)
		}
		if !machine && !strings.Contains(out, "WARNING: "+filepath.Join(dir, FileNode)) {
			t.Errorf("-o %s: no WARNINGS section:\n%s", output, out)
		}
	}
	if _, stderr, err := runCLIStderr(t, "explain", "--snapshot", filepath.Join("testdata", "snapshots", "seed"), "-o", "json"); err != nil || stderr != "" {
		t.Errorf("clean snapshot -o json: stderr %q (err %v), want nothing", stderr, err)
	}
}
