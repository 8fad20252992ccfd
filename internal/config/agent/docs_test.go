package agent

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// docsDir is the repository's docs directory, from this package's.
var docsDir = filepath.Join("..", "..", "..", "docs")

// docTable returns the rows of the first markdown table after heading (a line starting with it) in
// doc: each row's cells, trimmed, the header and separator rows left out.
func docTable(t *testing.T, doc, heading string) [][]string {
	t.Helper()
	_, after, ok := strings.Cut(doc, "\n"+heading)
	if !ok && !strings.HasPrefix(doc, heading) {
		t.Fatalf("docs/agent-config.md: no %q", heading)
	}
	var rows [][]string
	seen := false
	for _, line := range strings.Split(after, "\n") {
		if !strings.HasPrefix(line, "|") {
			if seen {
				break
			}
			continue
		}
		seen = true
		cells := strings.Split(strings.Trim(line, "|"), " | ")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		rows = append(rows, cells)
	}
	if len(rows) < 3 {
		t.Fatalf("docs/agent-config.md: table after %q has %d rows", heading, len(rows))
	}
	return rows[2:]
}

// defaultsByField flattens the defaulted AgentConfiguration into field path → value as JSON prints it.
func defaultsByField(t *testing.T) map[string]string {
	t.Helper()
	c := &AgentConfiguration{}
	SetDefaults(c)
	data, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		if o, ok := v.(map[string]any); ok && prefix != "headroom" {
			for k, e := range o {
				walk(prefix+k+".", e)
			}
			return
		}
		if f, ok := v.(float64); ok { // JSON numbers: 1000000, not 1e+06
			out[strings.TrimSuffix(prefix, ".")] = strconv.FormatFloat(f, 'f', -1, 64)
			return
		}
		out[strings.TrimSuffix(prefix, ".")] = fmt.Sprint(v)
	}
	walk("", m)
	return out
}

// sameDefault compares a documented default with the code's: durations by value ("1m" is "1m0s"),
// `""` as the empty string, anything else as text.
func sameDefault(doc, code string) bool {
	if doc == `""` {
		doc = ""
	}
	if d1, err := time.ParseDuration(doc); err == nil {
		d2, err := time.ParseDuration(code)
		return err == nil && d1 == d2
	}
	return doc == code
}

var backticked = regexp.MustCompile("`([^`]*)`")

// TestTheDocumentedDefaultsAreTheCode compares every default in docs/agent-config.md's field table and
// its default headroom table with SetDefaults and DefaultHeadroom.
func TestTheDocumentedDefaultsAreTheCode(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(docsDir, "agent-config.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	code := defaultsByField(t)
	checked := 0
	for _, row := range docTable(t, doc, "| Field |") {
		if len(row) < 3 {
			t.Errorf("docs/agent-config.md: row %q has no default column", row)
			continue
		}
		field := strings.Trim(row[0], "`")
		def := row[2]
		if strings.HasPrefix(def, "—") || def == "see below" { // no default (required, or apiVersion/kind); headroom below
			continue
		}
		m := backticked.FindStringSubmatch(def)
		if m == nil {
			t.Errorf("docs/agent-config.md: `%s`: default %q is not a `value`", field, def)
			continue
		}
		got, ok := code[field]
		if !ok {
			t.Errorf("docs/agent-config.md: `%s` documents default %s, but SetDefaults has no such field", field, m[1])
			continue
		}
		if !sameDefault(m[1], got) {
			t.Errorf("docs/agent-config.md: `%s` default %s, the code's is %q", field, m[0], got)
		}
		checked++
	}
	if checked < 30 {
		t.Errorf("checked %d documented defaults, want every field's (the table's format changed?)", checked)
	}

	want := DefaultHeadroom()
	documented := map[string]string{}
	for _, row := range docTable(t, doc, "## Default headroom") {
		for _, sig := range backticked.FindAllStringSubmatch(row[0], -1) {
			documented[sig[1]] = strings.Trim(row[1], "`")
		}
	}
	for _, sig := range sortedKeys(want) {
		if documented[sig] != want[sig] {
			t.Errorf("docs/agent-config.md: default headroom of %s is %q, the code's is %q", sig, documented[sig], want[sig])
		}
	}
	for _, sig := range sortedKeys(documented) {
		if _, ok := want[sig]; !ok {
			t.Errorf("docs/agent-config.md: default headroom of %s documented, the code has none", sig)
		}
	}
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// headroomClaims are ways the docs once stated a default headroom the code does not have.
var headroomClaims = regexp.MustCompile(`(?i)max\(\s*256\s*Mi|256\s*Mi\s*or\s*5\s*%|5\s*% of (the node's )?memory`)

// TestNoDocStatesAnotherDefaultHeadroom greps docs/*.md and the README for statements of the default
// headroom that contradict DefaultHeadroom (a flat 256Mi for memory, 5% of capacity for the rest).
func TestNoDocStatesAnotherDefaultHeadroom(t *testing.T) {
	if h := DefaultHeadroom(); h["memory.available"] != "256Mi" || h["nodefs.available"] != "5%" {
		t.Fatalf("DefaultHeadroom changed (%v): update the claims this test looks for", h)
	}
	files, err := filepath.Glob(filepath.Join(docsDir, "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, filepath.Join(docsDir, "..", "README.md"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(data), "\n") {
			if headroomClaims.MatchString(line) {
				t.Errorf("%s:%d: states a default headroom the code does not have (memory: 256Mi; disk, inodes, PIDs: 5%%): %s",
					f, i+1, strings.TrimSpace(line))
			}
		}
	}
}
