package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"
)

// event is one line of go test -json (cmd/test2json).
type event struct {
	Time       time.Time
	Action     string
	Package    string
	ImportPath string // build-output and build-fail events
	Test       string
	Elapsed    float64 // seconds
	Output     string
}

// result is a package's end: its outcome, the test binary's run time and what it waited for.
type result struct {
	pkg     string
	action  string // pass, fail or skip
	elapsed time.Duration
	waits   waits
	tests   []testTime // its top-level tests that passed or failed
	skipped []skipped  // its tests and subtests that skipped
	start   time.Time  // its first event
	end     time.Time  // its last event
}

// testTime is one top-level test's outcome and run time.
type testTime struct {
	name, action string
	elapsed      time.Duration
}

func main() {
	keep := flag.String("keep", "", "also write every line read to this file (the run's go test -json, to read again with testtable)")
	slowest := flag.Int("slowest", 15, "how many of the longest top-level tests to list (0: every one)")
	flag.Parse()
	if *slowest < 0 {
		fmt.Fprintf(os.Stderr, "testtable: -slowest %d: want 0 (every test) or more\n", *slowest)
		os.Exit(2)
	}
	if err := mainErr(os.Stdout, os.Stderr, flag.Args(), *keep, *slowest); err != nil {
		fmt.Fprintf(os.Stderr, "testtable: %v\n", err)
		os.Exit(1)
	}
}

// mainErr prints to out the plain output and the table of the named inputs (stdin when none), copying
// what it reads to keep when keep is not empty. A keep file that cannot be created is a warning on warn,
// not an error: the run's output and table matter more than its copy.
func mainErr(out, warn io.Writer, names []string, keep string, slowest int) error {
	ins, closeInputs, err := openInputs(names)
	if err != nil {
		return err
	}
	defer closeInputs()
	in := merged(ins)
	if keep != "" {
		if f, err := os.Create(keep); err != nil {
			fmt.Fprintf(warn, "testtable: this run's events are not kept: %v\n", err)
		} else {
			defer f.Close()
			in = io.TeeReader(in, f)
		}
	}
	results, err := run(in, out)
	if slices.ContainsFunc(results, func(r result) bool { return r.action == "fail" }) {
		fmt.Fprintln(out, "FAIL") // go test's last line when a package failed
	}
	writeTable(out, results, slowest)
	return err
}

// line is one line of a test's output, held until its top-level test ends.
type line struct{ test, text string }

// heldOutput is the output of one package's running tests and which of them failed.
type heldOutput struct {
	lines  []line
	failed map[string]bool
}

// take removes the lines of top and its subtests and returns those of the ones that failed (all of
// them with all), without the "=== RUN"-style lines only -v prints.
func (h *heldOutput) take(top string, all bool) string {
	var b strings.Builder
	kept := h.lines[:0]
	for _, l := range h.lines {
		if top != "" && l.test != top && !strings.HasPrefix(l.test, top+"/") {
			kept = append(kept, l)
			continue
		}
		if (all || h.failed[l.test]) && !strings.HasPrefix(l.text, "=== ") {
			b.WriteString(l.text)
		}
	}
	h.lines = kept
	return b.String()
}

// maxLine is the longest line of go test -json read (a test's output line can be long).
const maxLine = 64 << 20

// run copies the plain go test output of the JSON stream in to out and returns each package's result.
// A test's output is held until its top-level test ends and printed only for the tests that failed; a
// package that fails (a panic, a timeout) prints whatever its unfinished tests still hold. Lines that
// are not JSON pass through unchanged.
func run(in io.Reader, out io.Writer) ([]result, error) {
	held := map[string]*heldOutput{}
	waited := map[string]waits{}
	tests := map[string][]testTime{}
	skips := map[string][]skipped{}
	started := map[string]time.Time{}
	var results []result
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil || e.Action == "" {
			fmt.Fprintln(out, sc.Text())
			continue
		}
		if _, ok := started[e.Package]; !ok {
			started[e.Package] = e.Time
		}
		h := held[e.Package]
		if h == nil {
			h = &heldOutput{failed: map[string]bool{}}
			held[e.Package] = h
		}
		top := !strings.Contains(e.Test, "/")
		if e.Action == "output" {
			waited[e.Package] = waited[e.Package].add(e.Output)
		}
		if top && e.Test != "" && (e.Action == "pass" || e.Action == "fail") {
			tests[e.Package] = append(tests[e.Package], testTime{e.Test, e.Action, seconds(e.Elapsed)})
		}
		switch {
		case e.Action == "build-output":
			fmt.Fprint(out, e.Output)
		case e.Test != "" && e.Action == "output":
			h.lines = append(h.lines, line{e.Test, e.Output})
		case e.Test != "" && e.Action == "fail":
			h.failed[e.Test] = true
			if top {
				fmt.Fprint(out, h.take(e.Test, false))
			}
		case e.Test != "" && (e.Action == "pass" || e.Action == "skip"):
			if e.Action == "skip" {
				skips[e.Package] = append(skips[e.Package], skipped{e.Package, e.Test, h.reason(e.Test)})
			}
			if top {
				h.take(e.Test, false)
			}
		case e.Test == "" && e.Action == "output":
			if t := strings.TrimSpace(e.Output); t != "PASS" && !strings.HasPrefix(t, "=== ") && !strings.Contains(t, waitPrefix) {
				fmt.Fprint(out, e.Output)
			}
		case e.Test == "" && (e.Action == "pass" || e.Action == "fail" || e.Action == "skip"):
			if e.Action == "fail" {
				fmt.Fprint(out, h.take("", true))
			}
			delete(held, e.Package)
			results = append(results, result{pkg: e.Package, action: e.Action, elapsed: seconds(e.Elapsed),
				waits: waited[e.Package], tests: tests[e.Package], skipped: skips[e.Package], start: started[e.Package], end: e.Time})
			delete(waited, e.Package)
			delete(skips, e.Package)
			delete(started, e.Package)
			delete(tests, e.Package)
		}
	}
	return results, sc.Err()
}

func seconds(f float64) time.Duration { return time.Duration(f * float64(time.Second)) }

// writeTable prints the packages that ran tests by wall time, longest first (then by name), and the sum.
// slowest is how many of the longest top-level tests to list (0: all).
func writeTable(w io.Writer, results []result, slowest int) {
	rs := slices.DeleteFunc(slices.Clone(results), func(r result) bool { return r.action == "skip" })
	if len(rs) == 0 {
		return
	}
	slices.SortFunc(rs, func(a, b result) int {
		return cmp.Or(cmp.Compare(b.elapsed, a.elapsed), strings.Compare(a.pkg, b.pkg))
	})
	var sum time.Duration
	first, last := span(rs)
	fmt.Fprintf(w, "\nPACKAGE WALL TIME (test binary, longest first; from: its start in the run; waited for: the package's own reports, summed)\n")
	for _, r := range rs {
		sum += r.elapsed
		line := fmt.Sprintf("  %9s  %-4s  from +%-7s  %s", r.elapsed.Round(100*time.Millisecond), r.action, offset(first, r.start), r.pkg)
		if wf := r.waits.String(); wf != "" {
			line += "  (waited for " + wf + ")"
		}
		fmt.Fprintln(w, line)
	}
	fmt.Fprintf(w, "  %9s  sum over %d packages (they overlap: go test runs several at once)\n", sum.Round(time.Second), len(rs))
	fmt.Fprintf(w, "  %9s  wall time from the first package's start to the last one's end\n", offset(first, last))
	writeSlowest(w, rs, slowest)
	writeSkipped(w, results)
}

// span is the earliest start and the latest end of the packages' events (zero times when the stream had
// none, e.g. a test's hand-written events).
func span(rs []result) (first, last time.Time) {
	for _, r := range rs {
		if !r.start.IsZero() && (first.IsZero() || r.start.Before(first)) {
			first = r.start
		}
		if r.end.After(last) {
			last = r.end
		}
	}
	return first, last
}

// offset is t after first, to the second ("?" without times).
func offset(first, t time.Time) string {
	if first.IsZero() || t.IsZero() {
		return "?"
	}
	return t.Sub(first).Round(time.Second).String()
}

// writeSlowest prints the n longest top-level tests of all packages (all of them when n is 0), longest
// first (then by package and name): where the time goes.
func writeSlowest(w io.Writer, rs []result, n int) {
	type row struct {
		pkg string
		testTime
	}
	var all []row
	for _, r := range rs {
		for _, t := range r.tests {
			all = append(all, row{r.pkg, t})
		}
	}
	if len(all) == 0 {
		return
	}
	slices.SortFunc(all, func(a, b row) int {
		return cmp.Or(cmp.Compare(b.elapsed, a.elapsed), strings.Compare(a.pkg, b.pkg), strings.Compare(a.name, b.name))
	})
	if n == 0 || n > len(all) {
		n = len(all)
	}
	fmt.Fprintf(w, "\nSLOWEST TESTS (top-level, longest first; %d of %d)\n", n, len(all))
	for _, t := range all[:n] {
		fmt.Fprintf(w, "  %9s  %-4s  %s %s\n", t.elapsed.Round(100*time.Millisecond), t.action, t.pkg, t.name)
	}
}
