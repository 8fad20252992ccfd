package policy

import "time"

// The rules for carrying a plan out that span its actions: the shell (agent act) asks these and only
// makes the calls.

// CarryOn reports whether the shell carries out the plan's next eviction after one whose API calls
// learned c: once the API is found unavailable the rest are not attempted (each would wait for the same
// dead API; their outcome is ResultNotAttempted, which gives the pods and their tokens back).
func CarryOn(c Contact) bool { return c != ContactUnavailable }

// Contacted says what one ladder's attempts learned about the API server: an attempt that found it
// unavailable (unreachable, or "try later") makes it unavailable even when a later rung (the cgroup
// kill) succeeded; else any Eviction API or DELETE attempt is an answer; no API attempt, nothing.
func Contacted(attempts []Attempt) Contact {
	c := ContactNone
	for _, at := range attempts {
		switch {
		case at.Result == ResultUnavailable:
			return ContactUnavailable
		case at.Rung == RungEviction || at.Rung == RungDelete:
			c = ContactAnswered
		}
	}
	return c
}

// KillAfter reports whether a planned trend kill follows its pod's eviction whose ladder ended on rung
// with result: not when the ladder's own cgroup kill ended the pod, nor when the pod was gone already.
func KillAfter(rung Rung, result Result) bool {
	return rung != RungCgroupKill && result != ResultGone
}

// KillUnlisted reports whether the planned eviction of an unlisted pod (found only in the node's cgroup
// tree while the pod list is not synced: it cannot be evicted through the API) is carried out as a
// cgroup kill: only under a hard threshold, like the ladder's own kill rung; under a soft one nothing is
// done (ResultNotAttempted).
func KillUnlisted(ev Eviction) bool { return ev.Hard }

// WritesHeld reports whether the shell holds the writes that can wait (the taint, the ledger's
// settlements and the avoidances' expiry) at now: inside the API backoff, asking would only wait for the
// same unavailable API.
func (p *Plan) WritesHeld(now time.Time) bool { return now.Before(p.APIBackoffUntil) }

// ProtectedOOMScoreAdj is the kubelet's oom_score_adj for the processes of Guaranteed and node-critical
// containers (qos.guaranteedOOMScoreAdj; the pause container has -998).
const ProtectedOOMScoreAdj = -997

// UnlistedCandidate reports whether a pod found only in the node's cgroup tree (the pod list is not
// synced) may be a candidate, from its QoS cgroup ("besteffort", "burstable" or "guaranteed") and the
// oom_score_adj of its processes: BestEffort and Burstable pods none of whose processes the kubelet
// protects from the kernel's OOM killer. Without the API a critical pod cannot be told from another;
// the kernel's view is the one the agent has.
func UnlistedCandidate(qos string, oomScoreAdj []int) bool {
	if qos != "besteffort" && qos != "burstable" {
		return false
	}
	for _, adj := range oomScoreAdj {
		if adj == ProtectedOOMScoreAdj {
			return false
		}
	}
	return true
}
