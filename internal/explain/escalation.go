package explain

import (
	"fmt"
	"time"

	"github.com/kube-pressure/pressure/internal/policy"
)

// AgentLadder is how pressure-agent escalates an eviction once the policy planned it (policy.Escalation,
// carried out by actuate.Ladder):
// the PodDisruptionBudget fallback of hard evictions and the cgroup kill when the API is unreachable.
type AgentLadder struct {
	// AllowDelete lets a hard eviction that a PodDisruptionBudget still refuses after PDBFallbackWait
	// fall back to a DELETE of the pod.
	AllowDelete     bool
	PDBFallbackWait time.Duration
	// AllowCgroupKill lets a hard eviction SIGKILL the pod on the node when the API server is
	// unreachable.
	AllowCgroupKill bool
}

// ifRefused says what the agent does when a PodDisruptionBudget refuses the eviction of a victim. The
// snapshot holds no PodDisruptionBudget: whether one refuses is decided by the API server when the
// agent asks, so this is said for every victim.
func ifRefused(l *AgentLadder, hard bool, pdbRetry time.Duration) string {
	skip := fmt.Sprintf("the pod is given back and skipped for %s (policy pdbRetry): the next step tries the next pod", pdbRetry)
	if !hard {
		return "soft threshold, no fallback: " + skip
	}
	if l == nil {
		return "hard threshold: the agent's escalation settings are unknown (eviction.allowDelete, eviction.pdbFallbackWait)"
	}
	// The moves are the agent's own ladder (policy.Escalation) after a refusal that never ends.
	moves := policy.IfRefused(policy.LadderConfig{AllowDelete: l.AllowDelete, PDBFallbackWait: l.PDBFallbackWait}, hard)
	var wait time.Duration
	for _, m := range moves {
		switch m.Kind {
		case policy.MoveWait:
			wait = m.Wait
		case policy.MoveDelete:
			return fmt.Sprintf("hard threshold: the agent waits %s (eviction.pdbFallbackWait), reads the pod again (if it ended "+
				"meanwhile, e.g. the kubelet evicted it, nothing more is asked), asks the Eviction API once more "+
				"and, if the PodDisruptionBudget still refuses, DELETEs the pod (eviction.allowDelete)", wait)
		}
	}
	return "hard threshold, eviction.allowDelete off: " + skip
}

// escalate fills each victim's IfRefused and Avoidance.
func escalate(ps *Pressure, in Input, pdbRetry time.Duration, now time.Time) {
	for i := range ps.Victims {
		v := &ps.Victims[i]
		v.IfRefused = ifRefused(in.Ladder, v.hard, pdbRetry)
		if in.ForeseeAvoidance != nil {
			v.Avoidance = in.ForeseeAvoidance(v.UID, now)
		}
	}
}
