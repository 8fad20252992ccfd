package main

import (
	"testing"
	"time"

	"github.com/kube-pressure/pressure/test/evictaudit"
)

func TestFirstEvictionsTakesEachPodsFirstRequest(t *testing.T) {
	t0 := time.Date(2026, 12, 3, 17, 0, 0, 100e6, time.UTC)
	got := firstEvictions([]evictaudit.Request{
		{AuditID: "a1", Namespace: "bench", Pod: "stress-a", Received: t0, Completed: t0.Add(42 * time.Millisecond), Code: 201},
		{AuditID: "b", Namespace: "other", Pod: "stress-a", Received: t0.Add(time.Millisecond)},
		{AuditID: "a2", Namespace: "bench", Pod: "stress-a", Received: t0.Add(time.Second), Code: 429},
	})
	if len(got) != 2 || got["bench/stress-a"].AuditID != "a1" || got["other/stress-a"].AuditID != "b" {
		t.Errorf("firstEvictions = %+v, want bench/stress-a's first request (a1, not the retry a2) and other/stress-a", got)
	}
}
