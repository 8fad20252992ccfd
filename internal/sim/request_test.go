package sim

import (
	"testing"
	"time"

	"github.com/kube-pressure/pressure/internal/rank"
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
