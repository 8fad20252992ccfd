package policy

import (
	"testing"
	"time"
)

func TestCarryingAPlanOut(t *testing.T) {
	t1 := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		got  bool
		want bool
	}{
		{"the next eviction is carried out after an answered call", CarryOn(ContactAnswered), true},
		{"the next eviction is carried out after an action without API calls", CarryOn(ContactNone), true},
		{"the rest of the plan's evictions wait once the API is found unavailable", CarryOn(ContactUnavailable), false},
		{"a trend kill follows an accepted eviction", KillAfter(RungEviction, ResultEvicted), true},
		{"a trend kill follows a refused eviction", KillAfter(RungEviction, ResultRefused), true},
		{"no trend kill after the ladder's own cgroup kill", KillAfter(RungCgroupKill, ResultKilled), false},
		{"no trend kill of a pod already gone", KillAfter(RungDelete, ResultGone), false},
		{"an unlisted pod under a hard threshold is killed on the node", KillUnlisted(Eviction{Hard: true}), true},
		{"an unlisted pod under a soft threshold is left alone", KillUnlisted(Eviction{}), false},
		{"writes are held inside the API backoff", (&Plan{APIBackoffUntil: t1.Add(time.Second)}).WritesHeld(t1), true},
		{"writes go out once the API backoff is over", (&Plan{APIBackoffUntil: t1}).WritesHeld(t1), false},
		{"writes go out without an API backoff", (&Plan{}).WritesHeld(t1), false},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: got %t, want %t", tc.name, tc.got, tc.want)
		}
	}
}

func TestUnlistedCandidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		qos  string
		adj  []int
		want bool
	}{
		{"a BestEffort pod found only in the cgroup tree is a candidate", "besteffort", []int{1000}, true},
		{"a Burstable pod whose processes are not protected is a candidate", "burstable", []int{999, 500}, true},
		{"a Guaranteed pod is never a candidate", "guaranteed", []int{-997}, false},
		{"a pod with a process the kubelet protects from the OOM killer is not a candidate", "burstable", []int{999, ProtectedOOMScoreAdj}, false},
		{"a pod whose processes are not known yet is judged by its QoS class", "besteffort", nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := UnlistedCandidate(tc.qos, tc.adj); got != tc.want {
				t.Errorf("UnlistedCandidate(%q, %v) = %v, want %v", tc.qos, tc.adj, got, tc.want)
			}
		})
	}
}

func TestContacted(t *testing.T) {
	unreachable := Attempt{Rung: RungEviction, Result: ResultUnavailable}
	refused := Attempt{Rung: RungEviction, Result: ResultRefused}
	for _, tc := range []struct {
		name     string
		attempts []Attempt
		want     Contact
	}{
		{"no attempt learns nothing of the API", nil, ContactNone},
		{"an Eviction API refusal is an answer", []Attempt{refused}, ContactAnswered},
		{"a DELETE accepted is an answer", []Attempt{refused, refused, {Rung: RungDelete, Result: ResultEvicted}}, ContactAnswered},
		{"an unreachable API is unavailable even when the cgroup kill then succeeded",
			[]Attempt{unreachable, {Rung: RungCgroupKill, Result: ResultKilled}}, ContactUnavailable},
		{"a cgroup kill alone says nothing of the API", []Attempt{{Rung: RungCgroupKill, Result: ResultKilled}}, ContactNone},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Contacted(tc.attempts); got != tc.want {
				t.Errorf("Contacted(%v) = %q, want %q", tc.attempts, got, tc.want)
			}
		})
	}
}
