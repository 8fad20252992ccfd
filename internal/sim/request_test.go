package sim

import (
	"testing"
	"time"

	"github.com/kube-pressure/pressure/internal/rank"
	"github.com/kube-pressure/pressure/internal/signal"
)

func agentEvicted(uid string, at time.Time) RecordedPod {
	return RecordedPod{Info: PodInfo{Candidate: rank.Candidate{UID: uid}, End: EndEvicted, By: ActorAgent, Ended: at}}
}

func TestRecordingAgentRequest(t *testing.T) {
	t0 := time.Date(2026, 12, 5, 16, 12, 26, 0, time.UTC)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	kubelet := RecordedPod{Info: PodInfo{Candidate: rank.Candidate{UID: "k"}, End: EndEvicted, Ended: ms(100)}}
	for _, tc := range []struct {
		name string
		pods []RecordedPod
		want time.Duration
		gaps int
	}{
		{"no agent eviction says nothing", []RecordedPod{kubelet}, 0, 0},
		{"evictions of one plan give the median of their gaps, a gap of PlanGap or more is between two plans",
			[]RecordedPod{agentEvicted("c", ms(1100)), agentEvicted("a", ms(0)), agentEvicted("b", ms(300)), agentEvicted("d", ms(1500)),
				agentEvicted("e", ms(1700)), kubelet}, 300 * time.Millisecond, 3},
		{"evictions PlanGap or more apart are other plans", []RecordedPod{agentEvicted("a", ms(0)), agentEvicted("b", ms(500))}, 0, 0},
		{"two evictions at the same instant give no gap", []RecordedPod{agentEvicted("a", ms(0)), agentEvicted("b", ms(0))}, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, gaps := Recording{Pods: tc.pods}.AgentRequest()
			if got != tc.want || gaps != tc.gaps {
				t.Errorf("AgentRequest() = %s from %d gaps, want %s from %d", got, gaps, tc.want, tc.gaps)
			}
		})
	}
}

// TestRecordingAgentEviction: each of the recorded agent's evictions took from its request (the ledger's
// time less the time per request) until its pod left the local reads; the median of those.
func TestRecordingAgentEviction(t *testing.T) {
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	// reads every 100ms of three pods: a loses its memory at 500ms, b leaves the reads at 1500ms, c never.
	var local []LocalSample
	for n := 0; n <= 2000; n += 100 {
		x := LocalSample{At: ms(n), Pods: map[string]signal.PodStats{"c": stats("c", 50*mi, ms(n))}}
		if n < 500 {
			x.Pods["a"] = stats("a", 300*mi, ms(n))
		} else {
			x.Pods["a"] = stats("a", mi, ms(n))
		}
		if n < 1500 {
			x.Pods["b"] = stats("b", 100*mi, ms(n))
		}
		local = append(local, x)
	}
	kubelet := RecordedPod{Info: PodInfo{Candidate: rank.Candidate{UID: "b"}, End: EndEvicted, Ended: ms(1000)}}
	for _, tc := range []struct {
		name    string
		pods    []RecordedPod
		request time.Duration
		want    time.Duration
		n       int
	}{
		{"no agent eviction says nothing", []RecordedPod{kubelet}, 0, 0, 0},
		{"the median from each ledger time less the request to the release", []RecordedPod{agentEvicted("a", ms(400)),
			agentEvicted("b", ms(1000)), agentEvicted("c", ms(1000))}, 100 * time.Millisecond, 600 * time.Millisecond, 2},
		{"a release read before the request started counts as none", []RecordedPod{agentEvicted("a", ms(700))},
			100 * time.Millisecond, 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, n := Recording{Pods: tc.pods, Local: local}.AgentEviction(tc.request)
			if got != tc.want || n != tc.n {
				t.Errorf("AgentEviction(%s) = %s from %d, want %s from %d", tc.request, got, n, tc.want, tc.n)
			}
		})
	}
}
