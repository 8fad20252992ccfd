package testenv_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/kube-pressure/pressure/internal/testenv"
)

// childEnv makes the re-executed test binary run TestSkipOrFailChild for real.
const childEnv = "PRESSURE_TESTENV_CHILD"

// TestSkipOrFailChild is the subject of TestSkipOrFailFailsOnlyUnderCI; run alone it returns at once
// (it is not a skip of a real test: it only exists to be re-executed).
func TestSkipOrFailChild(t *testing.T) {
	if os.Getenv(childEnv) != "1" {
		return
	}
	testenv.SkipOrFail(t, "the %s is missing", "widget")
}

func TestSkipOrFailFailsOnlyUnderCI(t *testing.T) {
	for _, tc := range []struct {
		name, ci string
		wantFail bool
		want     string
	}{
		{"CI=true fails with the reason", "true", true, "--- FAIL: TestSkipOrFailChild"},
		{"CI unset skips with the reason", "", false, "--- SKIP: TestSkipOrFailChild"},
		{"CI=false skips with the reason", "false", false, "--- SKIP: TestSkipOrFailChild"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestSkipOrFailChild$", "-test.v")
			cmd.Env = append(os.Environ(), childEnv+"=1", "CI="+tc.ci)
			out, err := cmd.CombinedOutput()
			if failed := err != nil; failed != tc.wantFail {
				t.Errorf("child failed = %t (%v), want %t; output:\n%s", failed, err, tc.wantFail, out)
			}
			if !strings.Contains(string(out), tc.want) || !strings.Contains(string(out), "the widget is missing") {
				t.Errorf("child output lacks %q and the reason:\n%s", tc.want, out)
			}
		})
	}
}
