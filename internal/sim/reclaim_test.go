package sim

import (
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/kube-pressure/pressure/internal/decision"
	"github.com/kube-pressure/pressure/internal/policy"
)

// TestTheReclaimRungReclaimsThePageCacheInsteadOfEvicting: a reader whose working set is mostly clean,
// active page cache (1700Mi of it) creeps from 1500Mi to 1760Mi at 10Mi/s: the pods cgroup's working
// set leaves 288Mi, within 128Mi of the kubelet's 200Mi. Under policy reclaim-aware without the rung,
// the backstop evicts the reader as the fall projects a crossing of the kubelet's threshold; with the
// rung the agent reclaims the cache (the model frees it for good) and nobody is evicted.
func TestTheReclaimRungReclaimsThePageCacheInsteadOfEvicting(t *testing.T) {
	run := func(rung bool) Result {
		reader := pod("reader", 0, 0, Ramp{Start: 1500 * mi, Rate: 10 * mi, After: 5 * time.Second, Until: 1760 * mi})
		reader.Cache = 1700 * mi
		m := model(reader)
		m.Duration = time.Minute
		cfg := policy.DefaultConfig()
		cfg.Policy = policy.ReclaimAware
		cfg.Reclaim.Action.Enabled = rung
		o := Options{Kubelet: hard200(t), Timing: DefaultTiming(), NewAgent: PolicyAgent(cfg, policy.LadderConfig{}, hard200(t), decision.Semantics{}, nil),
			AgentTiming:   AgentTiming{SyncPeriod: 10 * time.Second, PollInterval: 100 * time.Millisecond, PollDelta: 32 * mi},
			AgentTaintKey: "pressure.kube-pressure.io/evicting"}
		return Simulate(m.World(rand.New(rand.NewSource(1))), o)
	}
	with, without := run(true), run(false)
	if got := evictions(without, RunAgent); len(got) != 1 || got[0].pod != "default/reader" || got[0].by != ActorAgent {
		t.Errorf("without the rung: evictions %v, want the reader by pressure-agent (the backstop)", got)
	}
	if got := evictions(with, RunAgent); len(got) != 0 {
		t.Errorf("with the rung: evictions %v, want none", got)
	}
	rs := events(with, RunAgent, KindReclaim)
	if len(rs) == 0 || rs[0].Subject != "default/reader" || !strings.Contains(rs[0].Detail, "of file pages instead of evicting") {
		t.Fatalf("with the rung: reclaims %+v, want the reader's page cache reclaimed", rs)
	}
	t.Logf("with the rung: %d reclaims, the first at %s: %s", len(rs), time.Duration(rs[0].Offset), rs[0].Detail)
}
