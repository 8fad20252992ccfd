package flakecheck

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// flakeCheck runs make flake-check at the repository's root on the sample package and returns its output
// and exit code.
func flakeCheck(t *testing.T, run string, n string) (string, int) {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "make", "--no-print-directory", "-C", root, "flake-check",
		"RUN="+run, "PKG=./hack/flakecheck/testdata/sample", "N="+n)
	cmd.Env = append(os.Environ(), "TMPDIR="+t.TempDir()) // flake-check's logs
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return string(out), 0
	case errors.As(err, &exit):
		return string(out), exit.ExitCode()
	default:
		t.Fatalf("make flake-check: %v\n%s", err, out)
		return "", -1
	}
}

func TestFlakeCheck(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Fatalf("make flake-check needs make: %v", err)
	}
	for _, c := range []struct {
		name, run string
		code      int
		want      []string
	}{
		{
			// make expanded the $/ of '^TestA$/^sub$' to nothing before, and the run matched no test.
			// Two passes: TestA and TestA/sub, not TestA/other.
			name: "a pattern with a dollar before a slash reaches go test as typed",
			run:  "^TestA$/^sub$", code: 0,
			want: []string{"-run '^TestA$/^sub$'", "run 1/2: pass", "(2 passed, 0 skipped)", "2 of 2 runs passed"},
		},
		{
			name: "a run that ran no test is not a pass",
			run:  "^TestNone$", code: 2, // make's exit status for a failed recipe
			want: []string{"no test ran", "0 of 2 runs passed"},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, code := flakeCheck(t, c.run, "2")
			if code != c.code {
				t.Fatalf("exit %d, want %d:\n%s", code, c.code, out)
			}
			for _, w := range c.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
		})
	}
}
