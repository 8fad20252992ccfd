//go:build !linux

package cli

import (
	"fmt"
	"runtime"
	"time"

	"github.com/kube-pressure/pressure/internal/explain"
)

// defaultCgroupRoot is the default of --cgroup-root (shown in the help; unused off Linux).
const defaultCgroupRoot = "/sys/fs/cgroup"

// errLocalUnsupported is what --local answers off Linux: it reads /proc, the cgroup filesystem and
// statfs of the node it runs on.
var errLocalUnsupported = fmt.Errorf("--local is only supported on linux (it reads /proc, cgroupfs and statfs "+
	"of the node it runs on; this is %s/%s): explain a node by name or a saved --snapshot DIR", runtime.GOOS, runtime.GOARCH)

// LocalInput fails off Linux with errLocalUnsupported.
func LocalInput(LocalOptions, time.Time) (explain.Input, error) {
	return explain.Input{}, errLocalUnsupported
}
