package agent

import (
	"testing"

	"github.com/kube-pressure/pressure/internal/source/cgroupfs"
	"github.com/kube-pressure/pressure/internal/source/podfs"
	"github.com/kube-pressure/pressure/internal/source/procfs"
)

// The defaults written again in defaults.go (the source packages are Linux-only, the configuration is
// read by kubectl-pressure on every platform) are the source packages' own.
func TestDefaultsWrittenAgainForOtherPlatformsAreTheSourcePackagesOwn(t *testing.T) {
	for _, c := range []struct {
		name      string
		got, want any
	}{
		{"cgroupRoot", DefaultCgroupRoot, cgroupfs.DefaultRoot},
		{"procRoot", DefaultProcRoot, procfs.DefaultRoot},
		{"podDiskUsage.walkMaxEntries", int64(DefaultPodDiskWalkMaxEntries), int64(podfs.DefaultMaxEntries)},
		{"podDiskUsage.walkTimeout", DefaultPodDiskWalkTimeout, podfs.DefaultMaxDuration},
	} {
		if c.got != c.want {
			t.Errorf("default %s = %v, the source package's is %v", c.name, c.got, c.want)
		}
	}
}
