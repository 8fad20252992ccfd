package explain

import (
	"fmt"

	"github.com/kube-pressure/pressure/internal/rank"
	"github.com/kube-pressure/pressure/internal/signal"
)

// why says in words why entry a ranks before entry b, given the key that decided it.
func why(sig signal.Signal, key rank.Key, a, b rank.Entry, u unit) string {
	an, bn := podName(a.Candidate), podName(b.Candidate)
	av, bv := a.Values, b.Values
	var s string
	switch key {
	case rank.KeyNoStats:
		s = fmt.Sprintf("%s has no stats and %s has: a pod without stats goes first", an, bn)
	case rank.KeyExceedsRequest, rank.KeyExceedsDiskRequest:
		s = fmt.Sprintf("%s uses more than its request (%s > %s), %s does not (%s <= %s): a pod above its request goes first",
			an, human(av.Usage, u), human(av.Request, u), bn, human(bv.Usage, u), human(bv.Request, u))
	case rank.KeyPriority:
		if sig == signal.PIDAvailable {
			s = fmt.Sprintf("%s has the lower priority (%d < %d)", an, av.Priority, bv.Priority)
			break
		}
		s = fmt.Sprintf("%s: %s has the lower priority (%d < %d)", exceedWords(key, av, bv), an, av.Priority, bv.Priority)
	case rank.KeyUsageAboveRequest, rank.KeyDiskUsageAboveRequest:
		s = fmt.Sprintf("%s and both have priority %d; %s is %s above its request, %s %s: the larger excess goes first",
			exceedWords(key, av, bv), av.Priority, an, human(av.Score, u), bn, human(bv.Score, u))
	case rank.KeyProcessCount:
		s = fmt.Sprintf("both have priority %d; %s runs more processes (%d > %d)", av.Priority, an, av.Score, bv.Score)
	default:
		s = fmt.Sprintf("tie on every kubelet key; ordered by %s, our tie-breaker (the kubelet's order is unspecified)", key)
	}
	if qosLevel(a.Candidate.QOSClass) > qosLevel(b.Candidate.QOSClass) {
		s += fmt.Sprintf(" (QoS class is not a ranking key: this %s pod goes before the %s one)",
			a.Candidate.QOSClass, b.Candidate.QOSClass)
	}
	return s
}

// exceedWords says whether both or neither pod use more than their request (the first key tied).
func exceedWords(key rank.Key, a, b rank.Values) string {
	if key == rank.KeyPriority && !a.HasStats && !b.HasStats {
		return "neither has stats"
	}
	if a.Exceeds && b.Exceeds {
		return "both use more than their request"
	}
	if !a.Exceeds && !b.Exceeds && a.HasStats {
		return "neither uses more than its request"
	}
	return "same standing against their requests"
}

// qosLevel orders QoS classes by how protected people expect them to be.
func qosLevel(q string) int {
	switch q {
	case rank.QOSGuaranteed:
		return 2
	case rank.QOSBurstable:
		return 1
	}
	return 0
}
