package agent

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/kube-pressure/pressure/internal/policy"
	"github.com/kube-pressure/pressure/internal/reclaim"
	"github.com/kube-pressure/pressure/internal/source/cgroupfs"
)

// podReclaimer carries out the reclaim rung's requests (policy.Plan.Reclaims): it asks the kernel to
// reclaim bytes from the cgroup of pod uid ("" for the pods cgroup) and says how much it freed.
type podReclaimer interface {
	ReclaimPod(ctx context.Context, uid string, bytes int64) (freed int64, err error)
}

// cgroupReclaimer is the podReclaimer of the node's cgroup tree, through internal/reclaim. The UID only
// selects among the listed pod cgroups (cgroupfs.Layout.PodDirs, as cgroupkill.Killer.KillPod does).
type cgroupReclaimer struct {
	Layout cgroupfs.Layout
	R      *reclaim.Reclaimer
}

// newCgroupReclaimer bounds the writes to the layout's pods cgroup, the rung's own bound per sync and
// its rate (reclaim.action.minInterval: the mechanism's own rate bound is the policy's, not a second one).
func newCgroupReclaimer(l cgroupfs.Layout, action policy.ReclaimAction) *cgroupReclaimer {
	return &cgroupReclaimer{Layout: l, R: &reclaim.Reclaimer{Root: filepath.Join(l.Memory, l.PodsCgroup),
		MaxBytes: action.MaxBytes, MinInterval: action.MinInterval}}
}

// ReclaimPod implements podReclaimer. A partial reclaim (the kernel reclaimed less than asked) is a
// success with what it freed; the policy judges whether that was enough.
func (c *cgroupReclaimer) ReclaimPod(ctx context.Context, uid string, bytes int64) (int64, error) {
	dir := filepath.Join(c.Layout.Memory, c.Layout.PodsCgroup)
	if uid != "" {
		dirs, err := c.Layout.PodDirs(uid)
		if err != nil {
			return 0, err
		}
		dir = dirs[0]
	}
	res := c.R.Reclaim(ctx, dir, bytes)
	if res.Partial && res.Err == nil {
		return res.Freed, nil
	}
	return res.Freed, res.Err
}

// reclaimUnavailable is why the policy's reclaim rung cannot act ("" when it can): Input.ReclaimUnavailable.
func (a *Agent) reclaimUnavailable() string {
	switch {
	case !a.Settings.Config.Reclaim.Action.Enabled:
		return "reclaim.action.enabled is false"
	case a.Settings.DryRun:
		return "dry run: the agent writes no cgroup file"
	case a.Reclaimer == nil:
		return "no writable pods cgroup"
	}
	return ""
}

// reclaimWait is how long a sync waits for one reclaim. reclaim.Reclaimer bounds its writes by its Timeout
// (a memory.reclaim write is interrupted in the kernel, between the kernel's reclaim passes), but a pass or
// a v1 resize can still run on past it: the sync must not wait for that, so a reclaim still running after
// reclaimWait counts as failed (the policy then evicts) and later reclaims are not started until it returns.
const reclaimWait = 3 * time.Second

// reclaim carries out the plan's reclaims in order, before any eviction of the plan, and returns their
// outcomes for the next step.
func (a *Agent) reclaim(ctx context.Context, plan policy.Plan) []policy.ReclaimOutcome {
	if a.Reclaimer == nil || len(plan.Reclaims) == 0 {
		return nil
	}
	out := make([]policy.ReclaimOutcome, 0, len(plan.Reclaims))
	for _, r := range plan.Reclaims {
		freed, err := a.reclaimOne(ctx, r)
		o := policy.ReclaimOutcome{UID: r.Pod.UID, Freed: max(freed, 0), At: a.Clock.Now()}
		if err != nil {
			o.Err = err.Error()
			a.Metrics.errors.WithLabelValues(stageReclaim).Inc()
		}
		a.Log.Info("reclaim", "target", r.Target(), "signal", r.Signal, "asked", r.Bytes, "freed", o.Freed, "err", o.Err, "why", r.Why)
		out = append(out, o)
	}
	return out
}

// reclaimOne runs one reclaim and waits for it at most reclaimWait; while an earlier one still runs, it
// starts none.
func (a *Agent) reclaimOne(ctx context.Context, r policy.ReclaimRequest) (int64, error) {
	if !a.st.reclaiming.CompareAndSwap(false, true) {
		return 0, errors.New("an earlier reclaim is still running in the kernel")
	}
	type result struct {
		freed int64
		err   error
	}
	done := make(chan result, 1)
	go func() {
		freed, err := a.Reclaimer.ReclaimPod(ctx, r.Pod.UID, r.Bytes)
		// Clear the flag before the result is sent: the caller starts the plan's next reclaim as soon as
		// it receives, and must not find this finished one still "running".
		a.st.reclaiming.Store(false)
		done <- result{freed, err}
	}()
	t := a.Clock.NewTimer(reclaimWait)
	defer t.Stop()
	select {
	case res := <-done:
		return res.freed, res.err
	case <-t.C():
		return 0, fmt.Errorf("reclaim of %s still running after %s: taken as failed", r.Target(), reclaimWait)
	}
}
