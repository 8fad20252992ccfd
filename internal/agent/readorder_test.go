package agent

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/source"
)

// changeAfterFirstRead is the node's reader with a change to the node made right after its first read
// (of either part): memory freed while a sync reads the node.
type changeAfterFirstRead struct {
	source.NodeReader
	change func()
}

func (r *changeAfterFirstRead) fire() {
	if r.change != nil {
		r.change()
		r.change = nil
	}
}

func (r *changeAfterFirstRead) ReadNode(now time.Time) (signal.Snapshot, error) {
	defer r.fire()
	return r.NodeReader.ReadNode(now)
}

func (r *changeAfterFirstRead) ReadPods(s *signal.Snapshot, now time.Time) error {
	defer r.fire()
	return r.NodeReader.ReadPods(s, now)
}

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
			h.agent.Source = &changeAfterFirstRead{NodeReader: h.agent.Source,
				change: func() { h.tree.setPod("u-stress", "besteffort", 1*mi) }}
			h.clock.Step(100 * time.Millisecond)
			res := h.agent.sync(t.Context(), trigger)
			if d := cmp.Diff(h.ladder.names(), []string{"stress"}); d != "" {
				t.Errorf("evicted (-got +want):\n%s\ntrace:\n%s", d, res.trace())
			}
		})
	}
}
