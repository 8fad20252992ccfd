package agent

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/threshold"
)

func TestLoopSyncsOnStartTicksAndWakeUps(t *testing.T) {
	h := newHarness(t, nil)
	scenario1(h, 1000*mi)
	wake := make(chan struct{}, 1)
	got := make(chan string, 16)
	h.agent.Wake = wake
	h.agent.Synced = func(r syncResult) { got <- r.Trigger }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.agent.Loop(ctx) }()
	next := func() string {
		select {
		case s := <-got:
			return s
		case <-time.After(10 * time.Second):
			t.Fatal("no sync within 10s")
		}
		return ""
	}
	var seen []string
	seen = append(seen, next())
	wake <- struct{}{}
	seen = append(seen, next())
	for !h.clock.HasWaiters() {
		time.Sleep(time.Millisecond)
	}
	h.clock.Step(10 * time.Second)
	seen = append(seen, next())
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Loop returned %v", err)
	}
	if d := cmp.Diff(seen, []string{TriggerStart, TriggerNotify, TriggerPeriodic}); d != "" {
		t.Errorf("sync triggers (-got +want):\n%s", d)
	}
}

func TestNodeThatCannotBeReadLeavesTheStateUnchanged(t *testing.T) {
	h := newHarness(t, nil)
	h.agent.Source = failingReader{}
	res := h.sync(time.Second)
	if res.Observed || h.agent.st.decision.LastObservations != nil {
		t.Errorf("observed %t, state %+v: want nothing decided", res.Observed, h.agent.st.decision)
	}
}

type failingReader struct{}

func (failingReader) Snapshot(time.Time) (signal.Snapshot, error) {
	return signal.Snapshot{}, errors.New("no cgroup")
}

func TestValidateReportsEveryProblem(t *testing.T) {
	c := DefaultConfig("")
	c.Settings.Policy = "fast"
	c.Settings.SyncPeriod = 0
	c.Settings.MaxEvictionsPerSync = 0
	err := c.Validate()
	if err == nil {
		t.Fatal("Validate accepted a bad configuration")
	}
	for _, want := range []string{"nodeName", `policy "fast"`, "syncPeriod 0s", "maxEvictionsPerSync 0"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %s", err, want)
		}
	}
	if err := DefaultConfig("node-a").Validate(); err != nil {
		t.Errorf("defaults are invalid: %v", err)
	}
}

func TestPressureThresholdsAddTheHeadroom(t *testing.T) {
	kc := kubeletConfig(t, map[string]string{"memory.available": "100Mi", "nodefs.available": "10%", "pid.available": "1000"})
	snap := signal.Snapshot{Observations: map[signal.Signal]signal.Observation{
		signal.MemoryAvailable:            {Available: 10 << 30, Capacity: 24 << 30},
		signal.AllocatableMemoryAvailable: {Available: 1 << 30, Capacity: 2 << 30},
		signal.NodeFsAvailable:            {Available: 50 << 30, Capacity: 100 << 30},
		signal.PIDAvailable:               {Available: 30000, Capacity: 32768},
	}}
	cfg := pressureThresholds(kc, snap, DefaultHeadroom())
	got := map[string]string{}
	for _, th := range cfg.Thresholds {
		got[string(th.Signal)] = th.Value.String() + " minReclaim=" + minReclaim(th.MinReclaim)
	}
	want := map[string]string{
		"allocatableMemory.available": "356Mi minReclaim=100Mi",       // 100Mi + 256Mi (5% of 2Gi is less)
		"memory.available":            "356Mi minReclaim=100Mi",       // 100Mi + 256Mi
		"nodefs.available":            "16106127600 minReclaim=100Mi", // 10% + 5% of 100Gi, both float32 fractions as the kubelet resolves them
		"pid.available":               "2638 minReclaim=<nil>",        // 1000 + 5% of 32768
	}
	if d := cmp.Diff(got, want); d != "" {
		t.Errorf("thresholds (-got +want):\n%s", d)
	}
}

func minReclaim(v *threshold.Value) string {
	if v == nil {
		return "<nil>"
	}
	return v.String()
}
