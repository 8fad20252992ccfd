//go:build !linux

package cli

import (
	"runtime"
	"time"
)

// cgroupSampler reads the node's cgroups; off Linux there are none.
type cgroupSampler struct{}

// newCgroupSampler fails off Linux.
func newCgroupSampler(string, string) (*cgroupSampler, error) {
	return nil, localUnsupported(runtime.GOOS, runtime.GOARCH)
}

func (*cgroupSampler) layout() string { return "" }

func (*cgroupSampler) driver() string { return "" }

func (*cgroupSampler) sample(now time.Time) CgroupSample { return CgroupSample{Time: now} }
