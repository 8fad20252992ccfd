package agent

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
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
// selects among the listed pod cgroups (as cgroupkill.Killer.KillPod does).
type cgroupReclaimer struct {
	Layout cgroupfs.Layout
	R      *reclaim.Reclaimer
}

// newCgroupReclaimer bounds the writes to the layout's pods cgroup and the rung's own bound per sync.
func newCgroupReclaimer(l cgroupfs.Layout, action policy.ReclaimAction) *cgroupReclaimer {
	return &cgroupReclaimer{Layout: l, R: &reclaim.Reclaimer{Root: filepath.Join(l.Memory, l.PodsCgroup),
		MaxBytes: action.MaxBytes}}
}

// ReclaimPod implements podReclaimer. A partial reclaim (the kernel reclaimed less than asked) is a
// success with what it freed; the policy judges whether that was enough.
func (c *cgroupReclaimer) ReclaimPod(ctx context.Context, uid string, bytes int64) (int64, error) {
	dir := filepath.Join(c.Layout.Memory, c.Layout.PodsCgroup)
	if uid != "" {
		cgs, err := c.Layout.PodCgroups()
		if err != nil {
			return 0, fmt.Errorf("list pod cgroups: %w", err)
		}
		dir = ""
		for _, cg := range cgs {
			if cg.UID == uid {
				dir = filepath.Join(c.Layout.Memory, cg.Rel)
				break
			}
		}
		if dir == "" {
			return 0, fmt.Errorf("no cgroup of pod %s below %s: %w", uid, filepath.Join(c.Layout.Memory, c.Layout.PodsCgroup), fs.ErrNotExist)
		}
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

// reclaimWait is how long a sync waits for one reclaim. A memory.reclaim write can block in the kernel
// far longer than reclaim.Reclaimer's Timeout, which is checked only between writes (the cgroup v2
// guest saw one block for minutes on anonymous memory): the sync must not wait for it, so a reclaim
// still running after reclaimWait counts as failed (the policy then evicts) and later reclaims are not
// started until it returns.
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
		defer a.st.reclaiming.Store(false)
		freed, err := a.Reclaimer.ReclaimPod(ctx, r.Pod.UID, r.Bytes)
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
