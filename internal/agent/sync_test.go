package agent

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kube-pressure/pressure/internal/actuate"
	"github.com/kube-pressure/pressure/internal/policy"
)

// scenario1 puts a stress pod (best-effort, ramping), a burstable pod over its request and a guaranteed
// pod on the 2Gi pods cgroup.
func scenario1(h *harness, stress int64) {
	h.pods.set(pod("stress", "u-stress", "besteffort", ""), pod("burst", "u-burst", "burstable", "50Mi"),
		pod("guar", "u-guar", "guaranteed", "200Mi"))
	h.tree.setPod("u-burst", "burstable", 300*mi)
	h.tree.setPod("u-guar", "guaranteed", 150*mi)
	h.tree.setPod("u-stress", "besteffort", stress)
}

func TestPressurePolicy(t *testing.T) {
	tests := []struct {
		name   string
		stress int64 // stress pod working set; pods cgroup limit 2048Mi, others use 450Mi
		want   []string
	}{
		// available = 2048 - 450 - stress; ours = 100Mi + 256Mi headroom = 356Mi.
		{"no eviction while available stays above the kubelet threshold plus headroom", 1200 * mi, nil},
		{"stress pod is evicted alone before the kubelet threshold is reached", 1300 * mi, []string{"stress"}},
		{"stress pod alone covers a deep deficit", 1550 * mi, []string{"stress"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, nil)
			scenario1(h, tc.stress)
			res := h.sync(time.Second)
			if d := cmp.Diff(h.ladder.names(), tc.want); d != "" {
				t.Errorf("evicted (-got +want):\n%s\ntrace:\n%s", d, res.trace())
			}
		})
	}
}

func TestKubeletPolicyActsOnlyAtTheKubeletThreshold(t *testing.T) {
	h := newHarness(t, func(s *Settings) { s.Policy = policy.Kubelet })
	scenario1(h, 1300*mi) // available 298Mi: above the kubelet's 100Mi
	h.sync(time.Second)
	if got := h.ladder.names(); len(got) != 0 {
		t.Fatalf("kubelet policy evicted %v above the kubelet threshold", got)
	}
	h.tree.setPod("u-stress", "besteffort", 1550*mi) // available 48Mi
	res := h.sync(time.Second)
	if d := cmp.Diff(h.ladder.names(), []string{"stress"}); d != "" {
		t.Errorf("evicted (-got +want):\n%s\ntrace:\n%s", d, res.trace())
	}
	if req := h.ladder.requests[0]; req.Threshold != "100Mi" || req.GracePeriodSeconds != 1 || !req.Hard {
		t.Errorf("request threshold %q grace %d hard %t, want 100Mi, 1, true", req.Threshold, req.GracePeriodSeconds, req.Hard)
	}
}

func TestEvictsSeveralPodsInRankOrderUntilTheTarget(t *testing.T) {
	h := newHarness(t, nil)
	var pods []*corev1.Pod
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		pods = append(pods, pod("be-"+n, "u-"+n, "besteffort", ""))
		h.tree.setPod("u-"+n, "besteffort", 350*mi)
	}
	h.pods.set(pods...)
	// available = 2048 - 1750 = 298Mi; target 356Mi + 100Mi min reclaim = 456Mi: need 158Mi, one pod.
	h.sync(time.Second)
	if got := h.ladder.names(); len(got) != 1 {
		t.Fatalf("evicted %v, want exactly one pod (350Mi covers the 158Mi need)", got)
	}
	// Deeper: every pod 390Mi -> available 98Mi, need 358Mi: still one pod (390Mi).
	h2 := newHarness(t, nil)
	h2.pods.set(pods...)
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		h2.tree.setPod("u-"+n, "besteffort", 100*mi)
	}
	h2.tree.setPod("u-a", "besteffort", 1550*mi) // available 98Mi; need 358Mi
	h2.tree.setPod("u-b", "besteffort", 300*mi)  // ranks after a (usage), 300Mi not needed after a
	h2.sync(time.Second)
	if d := cmp.Diff(h2.ladder.names(), []string{"be-a"}); d != "" {
		t.Errorf("evicted (-got +want):\n%s", d)
	}
}

func TestEvictsToTargetWithSmallPods(t *testing.T) {
	h := newHarness(t, nil)
	var pods []*corev1.Pod
	for i, n := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
		pods = append(pods, pod("be-"+n, "u-"+n, "besteffort", ""))
		h.tree.setPod("u-"+n, "besteffort", int64(240-i*10)*mi) // a largest
	}
	h.pods.set(pods...)
	// sum = 240+230+...+170 = 1640Mi; available 408Mi < 456Mi?  ours is 356Mi: not met yet.
	h.sync(time.Second)
	if got := h.ladder.names(); len(got) != 0 {
		t.Fatalf("evicted %v above threshold", got)
	}
	h.tree.setPod("u-a", "besteffort", 600*mi) // available 48Mi; need 408Mi: a (600Mi) is enough
	h.sync(time.Second)
	if d := cmp.Diff(h.ladder.names(), []string{"be-a"}); d != "" {
		t.Errorf("evicted (-got +want):\n%s", d)
	}
	h3 := newHarness(t, nil)
	h3.pods.set(pods...)
	for _, n := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
		h3.tree.setPod("u-"+n, "besteffort", 250*mi) // 2000Mi: available 48Mi, need 408Mi: two pods
	}
	h3.sync(time.Second)
	if d := cmp.Diff(h3.ladder.names(), []string{"be-a", "be-b"}); d != "" {
		t.Errorf("evicted (-got +want):\n%s", d)
	}
}

func TestTerminatingPodUsageCountsAsReleased(t *testing.T) {
	h := newHarness(t, nil)
	h.pods.set(pod("stress", "u-stress", "besteffort", "", terminating), pod("burst", "u-burst", "burstable", "50Mi"))
	h.tree.setPod("u-stress", "besteffort", 1500*mi)
	h.tree.setPod("u-burst", "burstable", 300*mi) // available 248Mi, or 1748Mi once stress is gone
	res := h.sync(time.Second)
	if got := h.ladder.names(); len(got) != 0 {
		t.Errorf("evicted %v while the terminating pod's usage covers the need\ntrace:\n%s", got, res.trace())
	}
	if !res.Pressure {
		t.Errorf("node not reported under pressure on the raw snapshot")
	}
}

func TestRequestedEvictionIsNotRepeatedBeforeThePodTerminates(t *testing.T) {
	h := newHarness(t, nil)
	scenario1(h, 1550*mi)
	h.sync(time.Second)
	h.sync(100 * time.Millisecond) // informer has not seen the deletion yet
	h.sync(100 * time.Millisecond)
	if d := cmp.Diff(h.ladder.names(), []string{"stress"}); d != "" {
		t.Errorf("evicted (-got +want):\n%s", d)
	}
}

func TestCriticalPodUsingTheMostMemoryIsNeverEvicted(t *testing.T) {
	h := newHarness(t, nil)
	h.pods.set(pod("critical", "u-crit", "besteffort", "", priority(2000001000)), pod("small", "u-small", "besteffort", ""))
	h.tree.setPod("u-crit", "besteffort", 1800*mi)
	h.tree.setPod("u-small", "besteffort", 100*mi) // available 148Mi
	for i := 0; i < 3; i++ {
		h.sync(10 * time.Second)
	}
	for _, n := range h.ladder.names() {
		if n == "critical" {
			t.Fatalf("critical pod evicted: %v", h.ladder.names())
		}
	}
	if d := cmp.Diff(h.ladder.names(), []string{"small"}); d != "" {
		t.Errorf("evicted (-got +want):\n%s", d)
	}
}

func TestDryRunRequestsEachPodOnceThroughTheLadder(t *testing.T) {
	h := newHarness(t, func(s *Settings) { s.DryRun = true })
	h.ladder.outcome = actuate.OutcomeDryRun
	scenario1(h, 1550*mi)
	h.sync(time.Second)
	h.sync(time.Second)
	if d := cmp.Diff(h.ladder.names(), []string{"stress"}); d != "" {
		t.Errorf("dry-run requests (-got +want):\n%s", d)
	}
	if len(h.killer.killed) != 0 {
		t.Errorf("dry-run killed %v", h.killer.killed)
	}
	want := `
		# HELP pressure_agent_evictions_total Eviction requests, by signal, path (eviction-api, delete, cgroup-kill, dry-run) and outcome.
		# TYPE pressure_agent_evictions_total counter
		pressure_agent_evictions_total{outcome="dry-run",path="dry-run",signal="allocatableMemory.available"} 1
	`
	if err := testutil.GatherAndCompare(h.reg, strings.NewReader(want), "pressure_agent_evictions_total"); err != nil {
		t.Error(err)
	}
}

func TestAPIOutageBacksOffWithoutPilingUpEvictions(t *testing.T) {
	h := newHarness(t, func(s *Settings) { s.KillLead = 0 })
	h.ladder.outcome = actuate.OutcomeUnavailable
	scenario1(h, 1550*mi)
	h.sync(time.Second)            // request 1 fails: backoff 1s
	h.sync(500 * time.Millisecond) // inside backoff: no request
	h.sync(100 * time.Millisecond) // inside backoff: no request
	if got := len(h.ladder.requests); got != 1 {
		t.Fatalf("%d requests during the backoff, want 1", got)
	}
	h.sync(time.Second) // backoff over: one more request, which fails: backoff 2s
	h.sync(time.Second) // inside
	if got := len(h.ladder.requests); got != 2 {
		t.Fatalf("%d requests, want 2 (exponential backoff)", got)
	}
	h.ladder.outcome = actuate.OutcomeEvicted
	h.sync(2 * time.Second)
	h.sync(100 * time.Millisecond)
	if d := cmp.Diff(h.ladder.names(), []string{"stress", "stress", "stress"}); d != "" {
		t.Errorf("requests (-got +want):\n%s", d)
	}
	if got := testutil.ToFloat64(h.agent.Metrics.signals["bytes"].available.WithLabelValues("allocatableMemory.available")); got != float64(48*mi) {
		t.Errorf("available gauge %v, want %d: the agent keeps observing during the outage", got, 48*mi)
	}
}

func TestTrendKillWhenOOMIsCloserThanTheEviction(t *testing.T) {
	h := newHarness(t, nil)
	scenario1(h, 1100*mi) // available 498Mi
	h.sync(time.Second)
	h.tree.setPod("u-stress", "besteffort", 1300*mi) // 200Mi in 200ms: 1 GiB/s, 298Mi left: 0.3s to OOM
	h.sync(200 * time.Millisecond)
	if d := cmp.Diff(h.killer.killed, []types.UID{"u-stress"}); d != "" {
		t.Errorf("killed (-got +want):\n%s", d)
	}
	if d := cmp.Diff(h.ladder.names(), []string{"stress"}); d != "" {
		t.Errorf("eviction requests (-got +want):\n%s (the kill comes after the eviction request)", d)
	}
}

func TestNoTrendKillOnASlowRamp(t *testing.T) {
	h := newHarness(t, nil)
	scenario1(h, 1280*mi)
	h.sync(time.Second)
	h.tree.setPod("u-stress", "besteffort", 1300*mi) // 20Mi/s, 298Mi left: 15s to OOM
	h.sync(time.Second)
	if len(h.killer.killed) != 0 || len(h.ladder.requests) != 1 {
		t.Errorf("killed %v requests %v, want no kill and one eviction request", h.killer.killed, h.ladder.names())
	}
}

func TestNodeEventsWhenPressureStartsAndEnds(t *testing.T) {
	h := newHarness(t, func(s *Settings) { s.KillLead = 0 })
	scenario1(h, 1300*mi)
	h.sync(time.Second)
	h.sync(time.Second)
	h.tree.removePod("u-stress")
	h.pods.set(pod("burst", "u-burst", "burstable", "50Mi"), pod("guar", "u-guar", "guaranteed", "200Mi"))
	h.sync(time.Second)
	want := []string{
		"started allocatableMemory.available observed 298Mi threshold 356Mi",
		"ended allocatableMemory.available observed 1598Mi",
	}
	if d := cmp.Diff(h.events.events, want); d != "" {
		t.Errorf("node events (-got +want):\n%s", d)
	}
}

func TestDetectionLatencyFromTheInterpolatedCrossing(t *testing.T) {
	h := newHarness(t, func(s *Settings) { s.KillLead = 0 })
	scenario1(h, 1092*mi) // available 506Mi
	h.sync(time.Second)
	h.tree.setPod("u-stress", "besteffort", 1392*mi) // available 206Mi after 1s: 356Mi crossed at 0.5s
	h.sync(time.Second)
	want := `
		# HELP pressure_agent_detection_latency_seconds Time from the estimated threshold crossing to the first eviction request of the episode.
		# TYPE pressure_agent_detection_latency_seconds histogram
		pressure_agent_detection_latency_seconds_bucket{le="0.001"} 0
		pressure_agent_detection_latency_seconds_bucket{le="0.0025"} 0
		pressure_agent_detection_latency_seconds_bucket{le="0.005"} 0
		pressure_agent_detection_latency_seconds_bucket{le="0.01"} 0
		pressure_agent_detection_latency_seconds_bucket{le="0.025"} 0
		pressure_agent_detection_latency_seconds_bucket{le="0.05"} 0
		pressure_agent_detection_latency_seconds_bucket{le="0.1"} 0
		pressure_agent_detection_latency_seconds_bucket{le="0.25"} 0
		pressure_agent_detection_latency_seconds_bucket{le="0.5"} 1
		pressure_agent_detection_latency_seconds_bucket{le="1"} 1
		pressure_agent_detection_latency_seconds_bucket{le="2.5"} 1
		pressure_agent_detection_latency_seconds_bucket{le="5"} 1
		pressure_agent_detection_latency_seconds_bucket{le="10"} 1
		pressure_agent_detection_latency_seconds_bucket{le="20"} 1
		pressure_agent_detection_latency_seconds_bucket{le="30"} 1
		pressure_agent_detection_latency_seconds_bucket{le="+Inf"} 1
		pressure_agent_detection_latency_seconds_sum 0.5
		pressure_agent_detection_latency_seconds_count 1
	`
	if err := testutil.GatherAndCompare(h.reg, strings.NewReader(want), "pressure_agent_detection_latency_seconds"); err != nil {
		t.Error(err)
	}
}

func TestEvictionsPerMinuteAreCappedInASlidingMinute(t *testing.T) {
	h := newHarness(t, func(s *Settings) { s.MaxEvictionsPerMinute, s.MaxEvictionsPerSync, s.KillLead = 3, 10, 0 })
	var pods []*corev1.Pod
	for _, n := range []string{"a", "b", "c", "d", "e", "f"} {
		pods = append(pods, pod("be-"+n, "u-"+n, "besteffort", ""))
		h.tree.setPod("u-"+n, "besteffort", 330*mi) // 1980Mi: available 68Mi, need 388Mi: two pods
	}
	h.pods.set(pods...)
	h.sync(time.Second)
	if got := len(h.ladder.requests); got != 2 {
		t.Fatalf("%d requests in the first sync, want 2 (the need)", got)
	}
	h.pods.set(pods[2:]...) // the two evicted pods are gone, their memory still charged (fixture)
	h.sync(time.Second)     // one left in this minute
	if got := len(h.ladder.requests); got != 3 {
		t.Fatalf("%d requests, want 3: the minute's limit", got)
	}
	h.pods.set(pods[3:]...)
	h.sync(30 * time.Second) // still inside the minute of the first two
	if got := len(h.ladder.requests); got != 3 {
		t.Fatalf("%d requests, want 3: the minute is not over", got)
	}
	h.sync(30 * time.Second) // the first two left the window
	if got := len(h.ladder.requests); got != 5 {
		t.Errorf("%d requests, want 5", got)
	}
}

func TestPDBRefusedPodIsRetriedAfterAPause(t *testing.T) {
	h := newHarness(t, func(s *Settings) { s.KillLead = 0 })
	h.ladder.outcome = actuate.OutcomeBlockedByPDB
	scenario1(h, 1550*mi)
	h.sync(time.Second)
	h.sync(time.Second) // stress is paused: the next pods are tried (and refused too)
	h.sync(time.Second) // every pod is paused
	if d := cmp.Diff(h.ladder.names(), []string{"stress", "burst", "guar"}); d != "" {
		t.Fatalf("requests within the pause: each refused pod once (-got +want):\n%s", d)
	}
	h.sync(10 * time.Second)
	if d := cmp.Diff(h.ladder.names(), []string{"stress", "burst", "guar", "stress"}); d != "" {
		t.Errorf("requests after the pause (-got +want):\n%s", d)
	}
}
