package reclaim

import (
	"context"
	"path/filepath"
	"time"

	"github.com/kube-pressure/pressure/internal/source/cgroupfs"
)

// Pods reclaims from the cgroups of the node's pods. A pod's cgroup is found where source/cgroupfs
// finds it (Layout.PodDirs), as cgroupkill.Killer finds the cgroup it kills: the UID only selects among
// the listed pod cgroups, so no value can steer a write into another cgroup, and the Reclaimer's Root is
// the layout's pods cgroup.
type Pods struct {
	Layout cgroupfs.Layout
	R      *Reclaimer
}

// NewPods bounds the writes to the layout's pods cgroup, at most maxBytes per call and at most once per
// minInterval per cgroup (the reclaim rung's reclaim.action.maxBytes and minInterval), less the shell's
// jitter: the policy plans a reclaim no sooner than minInterval after the last by its steps' times, and
// the write comes a few milliseconds after its step, so the same bound here refused the policy's next
// reclaim at 9.998 s of 10 s on the real node. The policy's bound decides; this one stops a caller
// that loops, and allows a tenth of the interval (at most a second) for the jitter. 0 keeps the
// Reclaimer's default.
func NewPods(l cgroupfs.Layout, maxBytes int64, minInterval time.Duration) *Pods {
	iv := minInterval - min(minInterval/10, time.Second)
	return &Pods{Layout: l, R: &Reclaimer{Root: filepath.Join(l.Memory, l.PodsCgroup), MaxBytes: maxBytes, MinInterval: iv}}
}

// ReclaimPod asks the kernel to reclaim bytes from the cgroup of pod uid ("" for the pods cgroup) and
// says how much it freed. A partial reclaim (the kernel reclaimed less than asked) is a success with
// what it freed; the caller judges whether that was enough. A pod with no listed cgroup is an error
// wrapping fs.ErrNotExist.
func (p *Pods) ReclaimPod(ctx context.Context, uid string, bytes int64) (int64, error) {
	dir := filepath.Join(p.Layout.Memory, p.Layout.PodsCgroup)
	if uid != "" {
		dirs, err := p.Layout.PodDirs(uid)
		if err != nil {
			return 0, err
		}
		dir = dirs[0]
	}
	res := p.R.Reclaim(ctx, dir, bytes)
	if res.Partial && res.Err == nil {
		return res.Freed, nil
	}
	return res.Freed, res.Err
}
