package actuate

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Released sums usage (by pod UID) over the pods that are terminating (deletionTimestamp set): their
// eviction is in flight and their usage is about to be released, so the agent subtracts it from what it
// still has to reclaim and never evicts more than needed. A terminating pod without a usage entry adds
// nothing (its usage is unknown, not zero); negative usage is ignored.
func Released(pods []*v1.Pod, usage map[types.UID]int64) int64 {
	var sum int64
	for _, p := range pods {
		if p == nil || p.DeletionTimestamp == nil {
			continue
		}
		if u, ok := usage[p.UID]; ok && u > 0 {
			sum += u
		}
	}
	return sum
}
