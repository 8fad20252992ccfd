package agent

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kube-pressure/pressure/internal/source/sourcetest"
)

// The stress pod (1300Mi) is evicted; at the next periodic sync its memory goes while the sync reads the
// node. The pods cgroup still counted it when read, the pod's own cgroup no longer: a torn read that
// credits the in-flight pod nothing against a signal still 58Mi under the threshold, and evicts the
// burstable pod for memory already back (soak seed 20261205, episode 63). The agent reads the pods
// before the signals, so either both see the memory or neither does.
func TestMemoryFreedWhileASyncReadsTheNodeDoesNotEvictTheNextPod(t *testing.T) {
	for _, trigger := range []string{TriggerPeriodic, TriggerNotify} {
		t.Run(trigger, func(t *testing.T) {
			h := newHarness(t, nil)
			scenario1(h, 1300*mi) // available 298Mi, the agent's threshold 356Mi
			h.sync(time.Second)
			if d := cmp.Diff(h.ladder.names(), []string{"stress"}); d != "" {
				t.Fatalf("first sync evicted (-got +want):\n%s", d)
			}
			h.agent.Source = &sourcetest.AfterFirstRead{NodeReader: h.agent.Source,
				Change: func() { h.tree.setPod("u-stress", "besteffort", 1*mi) }}
			h.clock.Step(100 * time.Millisecond)
			res := h.agent.sync(t.Context(), trigger)
			if d := cmp.Diff(h.ladder.names(), []string{"stress"}); d != "" {
				t.Errorf("evicted (-got +want):\n%s\ntrace:\n%s", d, res.trace())
			}
		})
	}
}
