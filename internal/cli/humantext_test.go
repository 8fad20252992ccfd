package cli

import (
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestHumanTextPrintsNoRawByteCounts checks every golden text of explain and simulate: amounts are
// printed for people ("40.0Gi"), never as raw byte counts ("42949674400"). The only long numbers
// left are UIDs, the critical priorities (2000000000 and 2000001000) and digits inside a hyphenated name
// (the soak's namespaces, soak-<seed>-<episode>).
func TestHumanTextPrintsNoRawByteCounts(t *testing.T) {
	uid := regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	long := regexp.MustCompile(`\b[0-9]{7,}\b`)
	name := regexp.MustCompile(`\b[a-z][a-z0-9]*(-[a-z0-9]+)+\b`)
	files, err := filepath.Glob(filepath.Join("testdata", "*", "golden", "*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	more, err := filepath.Glob(filepath.Join("testdata", "golden", "*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, more...)
	if len(files) < 10 {
		t.Fatalf("found %d golden texts, want those of explain and simulate", len(files))
	}
	for _, f := range files {
		for i, line := range strings.Split(readFile(t, f), "\n") {
			for _, n := range long.FindAllString(name.ReplaceAllString(uid.ReplaceAllString(line, "UID"), "NAME"), -1) {
				if v, _ := strconv.ParseInt(n, 10, 64); v < 2000000000 || v > 2000001000 {
					t.Errorf("%s:%d: raw number %s in human text: %s", f, i+1, n, line)
				}
			}
		}
	}
}
