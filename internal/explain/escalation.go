package explain

import (
	"fmt"
	"time"
)

// AgentLadder is how pressure-agent escalates an eviction once the policy planned it (actuate.Ladder):
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
	switch {
	case !hard:
		return "soft threshold, no fallback: " + skip
	case l == nil:
		return "hard threshold: the agent's escalation settings are unknown (eviction.allowDelete, eviction.pdbFallbackWait)"
	case !l.AllowDelete:
		return "hard threshold, eviction.allowDelete off: " + skip
	}
	return fmt.Sprintf("hard threshold: the agent waits %s (eviction.pdbFallbackWait), asks the Eviction API once more "+
		"and, if the PodDisruptionBudget still refuses, DELETEs the pod (eviction.allowDelete)", l.PDBFallbackWait)
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
