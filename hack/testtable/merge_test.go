package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTwoStreamsAreMergedWholeLinesWithEachPackagesOrderKept(t *testing.T) {
	race, raceW := io.Pipe()
	rest, restW := io.Pipe()
	const n = 500
	write := func(w *io.PipeWriter, pkg string) {
		for i := range n {
			// Lines longer than a pipe's atomic write, split across writes, must still arrive whole.
			fmt.Fprintf(w, `{"Action":"output","Package":%q,"Output":"%d %s\n"}`, pkg, i, strings.Repeat("x", 5000))
			io.WriteString(w, "\n")
		}
		w.Close()
	}
	go write(raceW, "race")
	go write(restW, "rest")
	got, err := io.ReadAll(merged([]input{{"race", race}, {"rest", rest}}))
	if err != nil {
		t.Fatal(err)
	}
	next := map[string]int{}
	for _, l := range strings.Split(strings.TrimSuffix(string(got), "\n"), "\n") {
		var pkg string
		var i int
		if _, err := fmt.Sscanf(l, `{"Action":"output","Package":%q,"Output":"%d`, &pkg, &i); err != nil {
			t.Fatalf("line %.80q... is not one whole line of an input: %v", l, err)
		}
		if i != next[pkg] {
			t.Fatalf("package %s: line %d after %d", pkg, i, next[pkg]-1)
		}
		next[pkg]++
	}
	if next["race"] != n || next["rest"] != n {
		t.Errorf("lines per stream %v, want %d each", next, n)
	}
}

func TestAReadErrorOfOneStreamNamesItAfterTheOthersLines(t *testing.T) {
	bad, badW := io.Pipe()
	badW.CloseWithError(errors.New("fifo gone"))
	good := strings.NewReader("line one\nline two\n")
	got, err := io.ReadAll(merged([]input{{"race.fifo", bad}, {"rest.fifo", good}}))
	if err == nil || !strings.Contains(err.Error(), "read race.fifo: fifo gone") {
		t.Errorf("error %v, want it to name race.fifo", err)
	}
	if string(got) != "line one\nline two\n" {
		t.Errorf("merged %q, want the good stream's lines", got)
	}
}

func TestTheNamedInputsOfARealGoTestRunGiveOneTableOfBoth(t *testing.T) {
	dir := writeModule(t)
	good, _ := goTest(t, dir, "-json", "./good")
	bad, _ := goTest(t, dir, "-json", "./bad")
	files := map[string][]byte{"race.json": good, "rest.json": bad}
	var names []string
	for _, name := range []string{"race.json", "rest.json"} {
		p := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(p, files[name], 0o644); err != nil {
			t.Fatal(err)
		}
		names = append(names, p)
	}
	ins, closeInputs, err := openInputs(names)
	if err != nil {
		t.Fatal(err)
	}
	defer closeInputs()
	var out bytes.Buffer
	results, err := run(merged(ins), &out)
	if err != nil {
		t.Fatal(err)
	}
	var table bytes.Buffer
	writeTable(&table, results, 15)
	for _, want := range []string{"pass  from +", "example.com/m/good", "fail  from +", "example.com/m/bad", "sum over 2 packages"} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, table.String())
		}
	}
	if !strings.Contains(out.String(), "--- FAIL: TestBad") {
		t.Errorf("output lacks the failing test of the second stream:\n%s", out.String())
	}
}

func TestAMissingInputIsNamed(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "race.fifo")
	if _, _, err := openInputs([]string{missing}); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("error %v, want it to name %s", err, missing)
	}
}

func TestTheKeptEventsGiveTheSameRunWhenReadAgainAndSlowestLimitsTheList(t *testing.T) {
	in := writtenRun(t)
	kept := filepath.Join(t.TempDir(), "run.json")
	var first, again bytes.Buffer
	if err := mainErr(&first, io.Discard, []string{in}, kept, 1); err != nil {
		t.Fatal(err)
	}
	if err := mainErr(&again, io.Discard, []string{kept}, "", 0); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(first.String(), "SLOWEST TESTS (top-level, longest first; 1 of 3)") {
		t.Errorf("-slowest 1 did not list one test of three:\n%s", first.String())
	}
	if !strings.Contains(again.String(), "SLOWEST TESTS (top-level, longest first; 3 of 3)") {
		t.Errorf("-slowest 0 did not list every test:\n%s", again.String())
	}
	before, _, _ := strings.Cut(first.String(), "SLOWEST TESTS")
	after, _, _ := strings.Cut(again.String(), "SLOWEST TESTS")
	if before != after {
		t.Errorf("the kept events read again give another run:\nfirst:\n%s\nagain:\n%s", before, after)
	}
}

func TestAKeepFileThatCannotBeCreatedIsAWarningNamingItAndTheTableStillPrints(t *testing.T) {
	in := writtenRun(t)
	keep := filepath.Join(t.TempDir(), "no-such-dir", "run.json")
	var out, warn bytes.Buffer
	if err := mainErr(&out, &warn, []string{in}, keep, 15); err != nil {
		t.Fatalf("error %v; want only a warning when the keep file cannot be created", err)
	}
	if !strings.Contains(warn.String(), "not kept") || !strings.Contains(warn.String(), keep) {
		t.Errorf("warning %q; want it to say the events are not kept and name %s", warn.String(), keep)
	}
	if !strings.Contains(out.String(), "PACKAGE WALL TIME") {
		t.Errorf("no table after the warning:\n%s", out.String())
	}
}

// writtenRun is the go test -json of writeModule's module, written to a file: a run to read again.
func writtenRun(t *testing.T) string {
	t.Helper()
	stream, _ := goTest(t, writeModule(t), "-json", "./...")
	in := filepath.Join(t.TempDir(), "rest.json")
	if err := os.WriteFile(in, stream, 0o644); err != nil {
		t.Fatal(err)
	}
	return in
}
