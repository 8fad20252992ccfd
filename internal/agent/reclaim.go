package agent

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kube-pressure/pressure/internal/policy"
)

// podReclaimer carries out the reclaim rung's requests (policy.Plan.Reclaims): it asks the kernel to
// reclaim bytes from the cgroup of pod uid ("" for the pods cgroup) and says how much it freed. On the
// node it is reclaim.Pods.
type podReclaimer interface {
	ReclaimPod(ctx context.Context, uid string, bytes int64) (freed int64, err error)
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
