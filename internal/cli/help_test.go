package cli

import (
	"strings"
	"testing"

	"k8s.io/klog/v2"
)

func TestHelpReadsAsAKubectlPlugin(t *testing.T) {
	t.Cleanup(func() { _, _ = runCLI(t, "-v", "0", "version") }) // klog's verbosity is process-wide
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"usage names kubectl pressure", []string{"explain", "--help"},
			[]string{"Usage:\n  kubectl pressure explain (NODE | --snapshot DIR | --local) [flags]"}},
		{"the snapshot placeholder is DIR", []string{"explain", "--help"},
			[]string{"--snapshot DIR ", "explain the snapshot directory DIR (written by kubectl pressure snapshot)"}},
		{"-v is log verbosity as in kubectl", []string{"--help"},
			[]string{"-v, --v Level", "--version "}},
		{"-v with a level runs the command", []string{"-v", "6", "version"}, []string{"kubectl-pressure "}},
		{"--version prints the version", []string{"--version"}, []string{"kubectl-pressure "}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := runCLI(t, tc.args...)
			if err != nil {
				t.Fatalf("%v: %v", tc.args, err)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("%v output does not contain %q:\n%s", tc.args, w, out)
				}
			}
		})
	}
}

// TestVerbosityFlagRaisesKlogVerbosity: -v N sets klog's verbosity (client-go logs each request at
// -v 6, as in kubectl), not a version flag.
func TestVerbosityFlagRaisesKlogVerbosity(t *testing.T) {
	t.Cleanup(func() { _, _ = runCLI(t, "-v", "0", "version") }) // klog's verbosity is process-wide
	if _, err := runCLI(t, "-v", "0", "version"); err != nil || klog.V(1).Enabled() {
		t.Fatalf("-v 0: err %v, V(1) enabled %v, want no verbose logging", err, klog.V(1).Enabled())
	}
	if _, err := runCLI(t, "-v", "6", "version"); err != nil {
		t.Fatal(err)
	}
	if !klog.V(6).Enabled() || klog.V(7).Enabled() {
		t.Errorf("after -v 6: V(6) enabled %v, V(7) enabled %v; want true, false", klog.V(6).Enabled(), klog.V(7).Enabled())
	}
}
