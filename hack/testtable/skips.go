package main

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
)

// skipped is a test (or subtest) that skipped, with the reason it printed.
type skipped struct {
	pkg, test, reason string
}

// reason is the last line test itself printed before it skipped (its t.Skip message), without the
// "--- SKIP" line and the file:line prefix; "(no reason printed)" when it printed none.
func (h *heldOutput) reason(test string) string {
	last := ""
	for _, l := range h.lines {
		text := strings.TrimSpace(l.text)
		if l.test != test || text == "" || strings.HasPrefix(text, "=== ") || strings.HasPrefix(text, "--- ") {
			continue
		}
		last = text
	}
	if last == "" {
		return "(no reason printed)"
	}
	// "file_test.go:48: skipping ...": the reason is what follows the location.
	if loc, rest, ok := strings.Cut(last, ": "); ok && strings.Contains(loc, ".go:") && !strings.Contains(loc, " ") {
		return rest
	}
	return last
}

// writeSkipped lists every skipped test of the run with its reason, by package and name: plain go test
// prints a skip only with -v, so without this list a skip goes unseen.
func writeSkipped(w io.Writer, rs []result) {
	var all []skipped
	for _, r := range rs {
		all = append(all, r.skipped...)
	}
	if len(all) == 0 {
		return
	}
	slices.SortFunc(all, func(a, b skipped) int {
		return cmp.Or(strings.Compare(a.pkg, b.pkg), strings.Compare(a.test, b.test))
	})
	fmt.Fprintf(w, "\nSKIPPED TESTS (%d, with the reason each printed)\n", len(all))
	for _, s := range all {
		fmt.Fprintf(w, "  %s %s: %s\n", s.pkg, s.test, s.reason)
	}
}
