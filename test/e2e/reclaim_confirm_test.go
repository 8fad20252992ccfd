package e2e

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/kube-pressure/pressure/internal/agent"
)

// The confirmed path's thrasher: a written (not sparse) file of 2500Mi, a fifth larger than the memory
// the 2Gi pods cgroup leaves it, whose last 1500Mi are read twice (warm: active cache, as a pod that
// reads its data set would have), then pages picked at random are read through a mapping. Measured
// without a kubelet (docs/benchmarks.md): the random refaults are near enough for the kernel to activate
// them, so active_file stays near 1.4Gi and the working set leaves 420-970Mi available; they come from
// the disk at about 45Mi/s (too slow for the refault estimate to drop: 10 s of refaults is a third of the
// active cache), and once refaulted pages were active before (workingset restores), their reads count as
// memory stalls: PSI some passes 10% about 30 s after the warm-up and holds near 17-38%.
var confirmArgs = []string{"--size", "2500Mi", "--random", "--warm", "1500Mi"}

// confirmHeadroom raises the agent's allocatableMemory.available threshold to the kubelet's 200Mi + 512Mi
// = 712Mi, so that the working set the kernel settles at (420-970Mi available) is below it while the
// backstop (200Mi + 128Mi) is not reached: the eviction, when it comes, is confirmed pressure's.
const (
	confirmHeadroom  = "512Mi"
	confirmThreshold = kubeletThr + 512*mib
	// confirmDecision is how long the thrasher may take to be evicted: writing the file (about 10 s),
	// the warm-up, and PSI rising past 10% (about 30 s measured).
	confirmDecision = 150 * time.Second
)

// TestReclaimAwareEvictsAConfirmedThrash: the working set crosses the agent's threshold as soon as the
// thrasher's cache is warm, but that is cache (reclaimable on the estimate) and nothing stalls: policy
// reclaim-aware does not evict for it. When the random reads thrash the active cache, PSI rises and the
// refaults confirm it: then reclaim-aware acts on the working set and evicts the thrasher, not the quiet
// pod, nor the quiet pod once the thrasher is gone (its cache stays charged to the pods cgroup on cgroup
// v1, and PSI avg10 still holds its stall). Baselines (opt-in): policy pressure with the same threshold
// evicts the thrasher on the working set at once, stall or not; the kubelet alone evicts nothing (the
// working set stays above its 200Mi).
func TestReclaimAwareEvictsAConfirmedThrash(t *testing.T) {
	e := requireNode(t)
	requireDiskBackedRoot(t, e)
	for _, c := range []contender{
		{"kubelet alone", nil, true, nil},
		{"agent policy pressure", withHeadroom(confirmHeadroom, func(*agent.Config) {}), true, nil},
		{"agent policy reclaim-aware", withHeadroom(confirmHeadroom, reclaimAware), false, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.baseline {
				requireBaselines(t)
			}
			r := runThrash(t, e, c, confirmArgs, confirmThreshold, confirmDecision)
			logConfirmTimes(t, r)
			switch {
			case c.agent == nil:
				checkNoEviction(t, r)
			case !c.baseline:
				checkThrasherAlone(t, r)
				checkConfirmed(t, r)
			default:
				// Seen on 2026-12-03: policy pressure evicts the thrasher, then the quiet pod for the
				// thrasher's cache, which cgroup v1 keeps charged to the pods cgroup after it is gone.
				checkFirstEvicted(t, r, "thrash")
			}
		})
	}
}

// checkConfirmed: the agent's eviction line says it acted on confirmed pressure, and the working set had
// crossed the agent's threshold before (the scenario tested the path: an unconfirmed crossing first).
func checkConfirmed(t *testing.T, r thrashRun) {
	t.Helper()
	lines := r.agent.logLines(`"msg":"evict"`)
	if len(lines) == 0 || !strings.Contains(lines[0], "confirmed=true") {
		t.Errorf("agent eviction lines %q, want the first to say confirmed=true", lines)
	}
	if r.s.crossedAt().IsZero() {
		t.Errorf("the working set never left less than the agent's threshold %dMi available: the scenario did not test the confirmed path",
			confirmThreshold/mib)
	}
}

// logConfirmTimes logs when the warm-up ended, when the working set crossed the agent's threshold and
// when the first eviction came, from the thrasher's creation.
func logConfirmTimes(t *testing.T, r thrashRun) {
	t.Helper()
	since := func(at time.Time) string {
		if at.IsZero() {
			return "never"
		}
		return at.Sub(r.created).Round(100 * time.Millisecond).String()
	}
	ev := "none"
	if r.o.decision > 0 {
		ev = r.o.decision.Round(100 * time.Millisecond).String()
	}
	t.Logf("from the thrasher's creation: warm-up done %s, working set below %dMi available %s, first eviction %s",
		since(warmDone(r.log)), confirmThreshold/mib, since(r.s.crossedAt()), ev)
}

// warmDone is the time of the thrasher's second warm-up line (zero: none).
func warmDone(log []byte) time.Time {
	for _, l := range strings.Split(string(log), "\n") {
		var ent struct {
			T     time.Time `json:"t"`
			Event string    `json:"event"`
			Count int       `json:"count"`
		}
		if json.Unmarshal([]byte(l), &ent) == nil && ent.Event == "warm" && ent.Count == 2 {
			return ent.T
		}
	}
	return time.Time{}
}
