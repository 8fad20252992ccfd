//go:build !linux

package cli

import (
	"runtime"
	"time"

	"github.com/kube-pressure/pressure/internal/explain"
)

// defaultCgroupRoot is the default of --cgroup-root (shown in the help; unused off Linux).
const defaultCgroupRoot = "/sys/fs/cgroup"

// LocalInput fails off Linux: it reads /proc, the cgroup filesystem and statfs of the node it runs on.
func LocalInput(LocalOptions, time.Time) (explain.Input, error) {
	return explain.Input{}, localUnsupported(runtime.GOOS, runtime.GOARCH)
}
