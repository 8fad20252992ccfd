package decision

import "github.com/kube-pressure/pressure/internal/rank"

// immediateGraceSeconds is the kubelet's immediateEvictionGracePeriodSeconds, used for hard thresholds
// and the local-storage path.
const immediateGraceSeconds = 1

// killGrace returns the grace of a pressure eviction: 1 s for a hard threshold; for a soft threshold
// evictionMaxPodGracePeriod, or min(max, terminationGracePeriodSeconds) when the pod sets it (not on a
// 1.34 kubelet with AllowOverwriteTerminationGracePeriodSeconds on: there the max alone).
func killGrace(hard bool, maxPodGrace int32, c rank.Candidate, sem Semantics) Grace {
	override := int64(immediateGraceSeconds)
	if !hard {
		override = int64(maxPodGrace)
		if c.TerminationGracePeriodSeconds != nil && !sem.softGraceIgnoresPod() {
			override = min(override, *c.TerminationGracePeriodSeconds)
		}
	}
	return graceFor(override)
}

// graceFor completes a Grace from the eviction manager's override.
func graceFor(override int64) Grace {
	return Grace{
		Override:           override,
		Effective:          effectiveGrace(override),
		KillTimeoutSeconds: max(10, override+override/2),
	}
}

// effectiveGrace is the pod worker's calculateEffectiveGracePeriod for a pod that is not yet terminating
// and has no deletionGracePeriodSeconds: the override replaces the (zero) current value and counts as an
// override even when it is 0, so the pod's terminationGracePeriodSeconds is NOT used as a fallback; the
// result is clamped to at least 1 s. (Spec §3.7 derives "soft, max 0 → the pod's TGPS"; the v1.36.3
// pod_workers.go code sets overridden=true for any non-nil override, so the result is 1 s.)
func effectiveGrace(override int64) int64 {
	if override < 1 {
		return 1
	}
	return override
}
