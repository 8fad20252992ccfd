package agent

import (
	"strings"
	"testing"
)

func TestReclaimOffReportsItselfUnavailable(t *testing.T) {
	if got := (ReclaimConfig{}).Unavailable(); !strings.HasPrefix(got, "reclaim unavailable: reclaim.enabled is false") {
		t.Errorf("off: Unavailable() = %q, want the reason", got)
	}
	if got := (ReclaimConfig{Enabled: true, Root: "/host/sys/fs/cgroup/kubepods.slice"}).Unavailable(); got != "" {
		t.Errorf("on: Unavailable() = %q, want \"\"", got)
	}
}
