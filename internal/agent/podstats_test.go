package agent

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/kube-pressure/pressure/internal/policy"
)

// periodic advances the clock by d and runs one periodic sync (no notifier woke it).
func (h *harness) periodic(d time.Duration) syncResult {
	h.clock.Step(d)
	return h.agent.sync(context.Background(), TriggerPeriodic)
}

// podWS is the working set the agent last read for a pod, in Mi.
func (h *harness) podWS(uid string) int64 {
	p, ok := h.agent.st.pods[uid]
	if !ok || p.MemoryWorkingSet == nil {
		return -1
	}
	return int64(*p.MemoryWorkingSet) / mi
}

func (h *harness) podReads(reason string) float64 {
	return testutil.ToFloat64(h.agent.Metrics.podStatsReads.WithLabelValues(reason))
}

// The agent's threshold here is 100Mi + 256Mi = 356Mi of allocatableMemory.available; "near" is below
// twice that, 712Mi. The pods cgroup is 2048Mi; burst and guar use 450Mi.
func TestPeriodicSyncFarFromEveryThresholdReusesThePodsStats(t *testing.T) {
	h := newHarness(t, nil)
	scenario1(h, 200*mi) // available 1398Mi
	h.periodic(time.Second)
	if h.podReads(policy.PodStatsFirst) != 1 || h.podWS("u-stress") != 200 {
		t.Fatalf("first sync: reads %v, stress %dMi: want the pods read", h.podReads(policy.PodStatsFirst), h.podWS("u-stress"))
	}
	h.tree.setPod("u-stress", "besteffort", 400*mi) // available 1198Mi: still far
	h.periodic(10 * time.Second)
	if h.podReads("reused") != 1 || h.podWS("u-stress") != 200 {
		t.Errorf("far sync: reused %v, stress %dMi: want the stats of the first read reused", h.podReads("reused"), h.podWS("u-stress"))
	}
	for i := 0; i < 4; i++ {
		h.periodic(10 * time.Second) // up to 50 s after the first read: still reused
	}
	if h.podReads("reused") != 5 {
		t.Errorf("reused %v times in 5 far syncs within the max age, want 5", h.podReads("reused"))
	}
	h.periodic(10 * time.Second) // 60 s: the max age (1m) is reached
	if h.podReads(policy.PodStatsStale) != 1 || h.podWS("u-stress") != 400 {
		t.Errorf("after the max age: stale reads %v, stress %dMi: want a fresh read", h.podReads(policy.PodStatsStale), h.podWS("u-stress"))
	}
	h.tree.setPod("u-stress", "besteffort", 1000*mi) // available 598Mi: near
	h.periodic(10 * time.Second)
	if h.podReads(policy.PodStatsNear) != 1 || h.podWS("u-stress") != 1000 {
		t.Errorf("near sync: reads %v, stress %dMi: want a fresh read", h.podReads(policy.PodStatsNear), h.podWS("u-stress"))
	}
	h.agent.sync(context.Background(), TriggerNotify)
	if h.podReads("wake-up") != 1 {
		t.Errorf("a notifier's sync: wake-up reads %v, want 1", h.podReads("wake-up"))
	}
}

// Between two periodic syncs the stress pod jumps from 100Mi to 1500Mi: available falls from 1498Mi (far)
// to 98Mi. The stale stats would rank the burstable pod first (250Mi above its request against the
// stress pod's 100Mi); the sync reads the node first, sees the crossing and ranks on fresh stats.
func TestACrossingBetweenTwoPeriodicSyncsIsRankedOnFreshPodStats(t *testing.T) {
	h := newHarness(t, nil)
	scenario1(h, 100*mi)
	h.periodic(time.Second)
	h.periodic(10 * time.Second)
	if h.podReads("reused") != 1 {
		t.Fatalf("reused %v, want the second sync to reuse the stats (the scenario tests nothing otherwise)", h.podReads("reused"))
	}
	h.tree.setPod("u-stress", "besteffort", 1500*mi)
	res := h.periodic(10 * time.Second)
	if d := cmp.Diff(h.ladder.names(), []string{"stress"}); d != "" {
		t.Errorf("evicted (-got +want):\n%s\ntrace:\n%s", d, res.trace())
	}
}

func TestPodStatsMaxAgeZeroReadsOnEverySyncLikeTheKubelet(t *testing.T) {
	h := newHarness(t, func(s *Settings) { s.PodStatsMaxAge = 0 })
	scenario1(h, 200*mi)
	for i := 0; i < 3; i++ {
		h.periodic(10 * time.Second)
	}
	if h.podReads(policy.PodStatsEverySync) != 3 || h.podReads("reused") != 0 {
		t.Errorf("every-sync reads %v, reused %v: want 3 and 0", h.podReads(policy.PodStatsEverySync), h.podReads("reused"))
	}
}
