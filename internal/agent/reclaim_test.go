package agent

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kube-pressure/pressure/internal/policy"
	"github.com/kube-pressure/pressure/internal/signal"
)

// recordingReclaimer answers each ReclaimPod with freed bytes, or err for the UIDs in fail.
type recordingReclaimer struct {
	calls []string
	freed int64
	fail  map[string]error
}

func (r *recordingReclaimer) ReclaimPod(_ context.Context, uid string, bytes int64) (int64, error) {
	r.calls = append(r.calls, uid)
	if err := r.fail[uid]; err != nil {
		return 0, err
	}
	return min(r.freed, bytes), nil
}

func TestReclaimUnavailableSaysWhyTheRungCannotAct(t *testing.T) {
	for _, tc := range []struct {
		name      string
		enabled   bool
		dry       bool
		reclaimer podReclaimer
		want      string
	}{
		{"the rung off says so", false, false, &recordingReclaimer{}, "reclaim.action.enabled is false"},
		{"a dry run writes no cgroup file", true, true, &recordingReclaimer{}, "dry run: the agent writes no cgroup file"},
		{"no reclaimer: no writable pods cgroup", true, false, nil, "no writable pods cgroup"},
		{"on, live, with a reclaimer: available", true, false, &recordingReclaimer{}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, func(s *Settings) { s.Config.Reclaim.Action.Enabled, s.DryRun = tc.enabled, tc.dry })
			h.agent.Reclaimer = tc.reclaimer
			if got := h.agent.reclaimUnavailable(); got != tc.want {
				t.Errorf("reclaimUnavailable() = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestPlannedReclaimsRunInOrderAndTheirOutcomesGoToTheNextStep(t *testing.T) {
	h := newHarness(t, nil)
	rec := &recordingReclaimer{freed: 300 << 20, fail: map[string]error{"uid-b": errors.New("write memory.reclaim: read-only file system")}}
	h.agent.Reclaimer = rec
	h.agent.init()
	plan := policy.Plan{Reclaims: []policy.ReclaimRequest{
		{Signal: signal.AllocatableMemoryAvailable, Pod: policy.PodRef{Namespace: "default", Name: "a", UID: "uid-a"}, Bytes: 500 << 20},
		{Signal: signal.AllocatableMemoryAvailable, Pod: policy.PodRef{Namespace: "default", Name: "b", UID: "uid-b"}, Bytes: 100 << 20},
		{Signal: signal.AllocatableMemoryAvailable, Bytes: 50 << 20},
	}}
	got := h.agent.reclaim(context.Background(), plan)
	if want := []string{"uid-a", "uid-b", ""}; !reflect.DeepEqual(rec.calls, want) {
		t.Errorf("reclaimed %q, want the plan's order %q", rec.calls, want)
	}
	now := h.clock.Now()
	want := []policy.ReclaimOutcome{{UID: "uid-a", Freed: 300 << 20, At: now},
		{UID: "uid-b", Err: "write memory.reclaim: read-only file system", At: now}, {UID: "", Freed: 50 << 20, At: now}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("outcomes %+v, want %+v", got, want)
	}
	h.agent.Reclaimer = nil
	if got := h.agent.reclaim(context.Background(), plan); got != nil {
		t.Errorf("without a reclaimer: outcomes %+v, want none", got)
	}
}

// blockingReclaimer blocks every ReclaimPod until release is closed.
type blockingReclaimer struct{ release chan struct{} }

func (b *blockingReclaimer) ReclaimPod(context.Context, string, int64) (int64, error) {
	<-b.release
	return 1 << 20, nil
}

func TestAReclaimBlockedInTheKernelFailsAfterTheWaitAndBlocksNoSync(t *testing.T) {
	h := newHarness(t, nil)
	b := &blockingReclaimer{release: make(chan struct{})}
	h.agent.Reclaimer = b
	h.agent.init()
	plan := policy.Plan{Reclaims: []policy.ReclaimRequest{{Signal: signal.AllocatableMemoryAvailable,
		Pod: policy.PodRef{Namespace: "default", Name: "a", UID: "uid-a"}, Bytes: 100 << 20}}}
	done := make(chan []policy.ReclaimOutcome, 1)
	go func() { done <- h.agent.reclaim(context.Background(), plan) }()
	for !h.clock.HasWaiters() {
		time.Sleep(time.Millisecond)
	}
	h.clock.Step(reclaimWait)
	got := <-done
	if len(got) != 1 || !strings.Contains(got[0].Err, "still running after 3s") {
		t.Fatalf("outcomes %+v, want one failed after %s", got, reclaimWait)
	}
	// The write still runs: the next plan's reclaim is not started beside it.
	if again := h.agent.reclaim(context.Background(), plan); len(again) != 1 || !strings.Contains(again[0].Err, "still running in the kernel") {
		t.Errorf("while the first runs: %+v, want a refusal", again)
	}
	close(b.release)
	for h.agent.st.reclaiming.Load() {
		time.Sleep(time.Millisecond)
	}
	if again := h.agent.reclaim(context.Background(), plan); len(again) != 1 || again[0].Err != "" {
		t.Errorf("after it returned: %+v, want a reclaim", again)
	}
}
