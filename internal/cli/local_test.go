package cli

import (
	"strings"
	"testing"
)

// TestLocalUnsupportedOffLinuxSaysWhatWorksInstead checks the error kubectl-pressure built for macOS
// or Windows gives for --local (local_other.go; test/deploy cross-compiles those builds).
func TestLocalUnsupportedOffLinuxSaysWhatWorksInstead(t *testing.T) {
	err := localUnsupported("darwin", "arm64")
	for _, want := range []string{"--local is only supported on linux", "darwin/arm64", "--snapshot"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}
