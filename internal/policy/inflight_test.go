package policy

import (
	"strings"
	"testing"
	"time"
)

func TestInFlightRule(t *testing.T) {
	rule := InFlightRule{TTL: 2 * time.Minute}
	for _, tc := range []struct {
		name  string
		rule  InFlightRule
		age   time.Duration
		state PodState
		want  bool
	}{
		{"an eviction accepted a minute ago whose pod still runs is in flight", rule, time.Minute, PodListed, true},
		{"an eviction accepted 3 minutes ago whose pod still runs is no longer in flight", rule, 3 * time.Minute, PodListed, false},
		{"an eviction is no longer in flight exactly at its lifetime", rule, 2 * time.Minute, PodListed, false},
		{"a terminating pod is in flight however old the request", rule, time.Hour, PodTerminating, true},
		{"a pod gone (or settled in the ledger) is not in flight, however young the request", rule, 0, PodGone, false},
		{"a rule without a lifetime takes DefaultInFlightTTL", InFlightRule{}, DefaultInFlightTTL - time.Second, PodListed, true},
		{"a rule without a lifetime ends at DefaultInFlightTTL", InFlightRule{}, DefaultInFlightTTL, PodListed, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.rule.Holds(t0, t0.Add(tc.age), tc.state); got != tc.want {
				t.Errorf("Holds(age %s, state %d) = %v, want %v", tc.age, tc.state, got, tc.want)
			}
		})
	}
}

// TestStepFollowsTheInFlightRule runs Step on a node whose one hog is below the hard threshold and says
// whether the last step requests the hog's eviction: the agent's own requests, the ledger's entries a
// restarted agent reads and terminating pods all follow the one rule and its one lifetime.
func TestStepFollowsTheInFlightRule(t *testing.T) {
	node := []string{
		"config killLead=0",
		"kubelet evictionHard memory.available=100Mi",
		"observe memory.available=6Gi capacity=8Gi",
		"observe allocatableMemory.available=48Mi capacity=2Gi",
	}
	for _, tc := range []struct {
		name  string
		lines []string
		evict bool
	}{
		{"a pod whose eviction was requested a minute ago is not requested again",
			[]string{"pod hog usage=1700Mi", "step t=1s", "step t=61s"}, false},
		{"an eviction requested 3 minutes ago whose pod still runs is no longer credited: the pod is requested again",
			[]string{"pod hog usage=1700Mi", "step t=1s", "step t=181s"}, true},
		{"the lifetime is the policy's inFlightTTL",
			[]string{"config ttl=10m", "pod hog usage=1700Mi", "step t=1s", "step t=181s"}, false},
		{"a terminating pod is never requested, however old its deletion",
			[]string{"pod hog usage=1700Mi deleted=-1h", "step t=1s"}, false},
		{"a restarted agent's ledger entry of a minute ago keeps the pod in flight",
			[]string{"pod hog usage=1700Mi", "ledger hog at=0s", "step t=60s"}, false},
		{"a restarted agent's ledger entry of 3 minutes ago no longer holds the pod",
			[]string{"pod hog usage=1700Mi", "ledger hog at=0s", "step t=180s"}, true},
		{"under the kubelet policy an in-flight pod is waited for, not requested again",
			[]string{"config policy=kubelet", "pod hog usage=1700Mi", "step t=1s", "step t=61s"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newMachine()
			var out string
			for _, line := range append(append([]string(nil), node...), tc.lines...) {
				o, err := m.run(line)
				if err != nil {
					t.Fatalf("%s: %v", line, err)
				}
				if o != "" {
					out = o
				}
			}
			if got := strings.Contains(out, "=> evict default/hog "); got != tc.evict {
				t.Errorf("last step evicts the hog: %v, want %v; plan:\n%s", got, tc.evict, out)
			}
		})
	}
}
