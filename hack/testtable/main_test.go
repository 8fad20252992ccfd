package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kube-pressure/pressure/test/cluster"
)

// writeModule writes a module with a passing, a failing (with a subtest) and a test-less package.
func writeModule(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"go.mod": "module example.com/m\n\ngo 1.24\n",
		"good/good_test.go": "package good\n\nimport (\n\t\"fmt\"\n\t\"os\"\n\t\"testing\"\n)\n\n" +
			"func TestMain(m *testing.M) {\n\tfmt.Fprintln(os.Stderr, \"cluster: pressure-wait: node lock: 1m30s\")\n\tos.Exit(m.Run())\n}\n\n" +
			"func TestGood(t *testing.T) {\n\tt.Log(\"quiet unless -v\")\n\tfmt.Fprintln(os.Stderr, \"pressure-wait: node lock: 30s\")\n" +
			"\tfmt.Fprintln(os.Stderr, \"pressure-wait: control plane start: 1.5s\")\n}\n\nfunc TestSkipped(t *testing.T) { t.Skip(\"not here\") }\n",
		"bad/bad_test.go": "package bad\n\nimport \"testing\"\n\nfunc TestFine(t *testing.T) {}\n\n" +
			"func TestBad(t *testing.T) {\n\tt.Run(\"sub\", func(t *testing.T) { t.Error(\"sub broke\") })\n\tt.Log(\"after the subtest\")\n}\n",
		"none/none.go": "package none\n",
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// goTest runs go test in dir and returns its stdout and whether it failed.
func goTest(t *testing.T, dir string, args ...string) ([]byte, bool) {
	t.Helper()
	cmd := exec.Command("go", append([]string{"test", "-count=1", "-p=1"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=", "GOWORK=off")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatalf("go test %v: %v\n%s", args, err, stderr.Bytes())
	}
	return out, err != nil
}

var durations = regexp.MustCompile(`\d+\.\d+s`)

func TestOutputIsPlainGoTestsAndTheTableListsEachPackage(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Fatalf("go not in PATH: %v", err) // go test itself runs this: go is always there
	}
	dir := writeModule(t)
	plain, plainFailed := goTest(t, dir, "./...")
	stream, jsonFailed := goTest(t, dir, "-json", "./...")
	if !plainFailed || !jsonFailed {
		t.Fatalf("go test failed: plain %t, json %t; want both (package bad fails)", plainFailed, jsonFailed)
	}
	var out bytes.Buffer
	results, err := run(bytes.NewReader(stream), &out)
	if err != nil {
		t.Fatal(err)
	}
	// Package lines as plain go test prints them, in its order; the failing tests' messages; nothing of
	// -v (the RUN lines, the passing test's log).
	norm := func(b []byte) string { return durations.ReplaceAllString(string(b), "T") }
	got := norm(out.Bytes())
	var pkgLines []string
	for _, l := range strings.Split(norm(plain), "\n") {
		if strings.HasPrefix(l, "ok  ") || strings.HasPrefix(l, "FAIL\t") || strings.HasPrefix(l, "?   ") {
			pkgLines = append(pkgLines, l)
		}
	}
	if want := strings.Join(pkgLines, "\n") + "\n"; !strings.Contains(got, want) {
		t.Errorf("output lacks plain go test's package lines %q:\n%s", want, got)
	}
	for _, want := range []string{"bad_test.go:8: sub broke", "--- FAIL: TestBad/sub (T)", "bad_test.go:9: after the subtest", "--- FAIL: TestBad (T)"} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	for _, unwanted := range []string{"=== RUN", "quiet unless -v", "TestFine", "TestSkipped", "PASS\n", "m/bad  (waited"} {
		if strings.Contains(got, unwanted) {
			t.Errorf("output has %q, which only -v prints:\n%s", unwanted, got)
		}
	}
	var table bytes.Buffer
	writeTable(&table, results, 15)
	for _, want := range []string{"fail  example.com/m/bad", "example.com/m/good  (waited for node lock 2m0s, control plane start 1.5s)",
		"wall time from the first package's start to the last one's end",
		"sum over 2 packages", "SLOWEST TESTS (top-level, longest first; 3 of 3)", "example.com/m/bad TestBad\n"} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, table.String())
		}
	}
	slowest, skippedList, _ := strings.Cut(table.String(), "SKIPPED TESTS")
	if strings.Contains(slowest, "TestSkipped") || strings.Contains(slowest, "TestBad/sub") {
		t.Errorf("slowest tests list a skipped test or a subtest:\n%s", table.String())
	}
	// plain go test shows a skip only with -v: the table lists each with its reason.
	if want := " (1, with the reason each printed)\n  example.com/m/good TestSkipped: not here\n"; skippedList != want {
		t.Errorf("skipped tests %q, want %q", skippedList, want)
	}
	if strings.Contains(table.String(), "example.com/m/none") {
		t.Errorf("table lists the package without tests:\n%s", table.String())
	}
}

func TestLinesThatAreNotJSONPassThrough(t *testing.T) {
	var out bytes.Buffer
	if _, err := run(strings.NewReader("make: something\n{\"Action\":\"output\",\"Package\":\"p\",\"Output\":\"ok  \\tp\\t0.1s\\n\"}\n"), &out); err != nil {
		t.Fatal(err)
	}
	if got, want := out.String(), "make: something\nok  \tp\t0.1s\n"; got != want {
		t.Errorf("output %q, want %q", got, want)
	}
}

func TestTheClusterPackagesWaitLinesAreSummed(t *testing.T) {
	w := waits{}.add("cluster: " + cluster.WaitLine("node lock", 90*time.Second) + "\n")
	w = w.add(cluster.WaitLine("node start", 2500*time.Millisecond) + "\n")
	w = w.add(cluster.WaitLine("node lock", 30*time.Second))
	w = w.add("pressure-wait: garbage: not-a-duration\n").add("no wait here\n")
	if got, want := w.String(), "node lock 2m0s, node start 2.5s"; got != want {
		t.Errorf("waits %q, want %q", got, want)
	}
}
