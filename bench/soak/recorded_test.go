package soak

import (
	"strings"
	"testing"
	"time"
)

func TestRecorded(t *testing.T) {
	end := time.Date(2026, 12, 5, 14, 28, 27, 563_000_000, time.UTC)
	before := Eviction{Namespace: "a", Pod: "hog-0", By: "agent", At: end.Add(-time.Second)}
	after := Eviction{Namespace: "a", Pod: "steady-burstable", By: "agent", At: end.Add(614 * time.Millisecond)}
	kubelet := Eviction{Namespace: "a", Pod: "hog-1", By: "kubelet", At: end.Add(time.Second)}
	for _, tc := range []struct {
		name       string
		evs        []Eviction
		wantWithin int
		wantMsg    string
	}{
		{"an agent eviction the recording saw is judged by simulate", []Eviction{before}, 1, ""},
		{"an agent eviction after the recording stopped is a violation naming the driver's cause",
			[]Eviction{before, after}, 1, "a/steady-burstable at 14:28:28.177, 614ms after the episode's recording stopped"},
		{"a kubelet eviction after the recording is left to the other invariants", []Eviction{kubelet}, 1, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			within, vs := Recorded(tc.evs, end)
			if len(within) != tc.wantWithin {
				t.Errorf("within = %v, want %d evictions", within, tc.wantWithin)
			}
			if tc.wantMsg == "" {
				wantViolations(t, vs, 0, InvSimulate)
				return
			}
			wantViolations(t, vs, 1, InvSimulate)
			if len(vs) == 1 && !strings.Contains(vs[0].Message, tc.wantMsg) {
				t.Errorf("message %q, want it to say %q", vs[0].Message, tc.wantMsg)
			}
		})
	}
}
