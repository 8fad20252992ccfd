package soak

import (
	"fmt"
	"time"
)

// Recorded splits the agent's evictions by the end of the episode's recording (until): simulate can
// judge only those it saw the reasons for. An agent eviction after until is itself a violation of
// invariant 2, named as the driver's: the episode ended while the node was still changing, and the
// recording stopped before the agent acted (Plan.MinDuration keeps an episode running while its
// workloads grow). The kubelet's evictions are kept as they are: invariant 2 does not judge them.
func Recorded(evs []Eviction, until time.Time) (within []Eviction, vs []Violation) {
	for _, e := range evs {
		if e.By == "agent" && e.At.After(until) {
			vs = append(vs, Violation{InvSimulate, fmt.Sprintf(
				"the agent evicted %s/%s at %s, %s after the episode's recording stopped: the episode ended while the node was still changing, and simulate cannot judge it",
				e.Namespace, e.Pod, e.At.UTC().Format("15:04:05.000"), e.At.Sub(until).Round(time.Millisecond))})
			continue
		}
		within = append(within, e)
	}
	return within, vs
}
