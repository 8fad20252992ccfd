package version

import (
	"strings"
	"testing"
)

func TestStringNamesBinaryVersionCommitAndGo(t *testing.T) {
	old, oldCommit := Version, Commit
	defer func() { Version, Commit = old, oldCommit }()
	Version, Commit = "v1.2.3", "abc123"
	got := Get("pressure-agent").String()
	for _, want := range []string{"pressure-agent", "v1.2.3", "commit abc123", "go1."} {
		if !strings.Contains(got, want) {
			t.Errorf("Get().String() = %q; want it to contain %q", got, want)
		}
	}
}
