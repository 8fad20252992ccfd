package agent

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kube-pressure/pressure/internal/signal"
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
	go func() { done <- h.agent.SyncLoop(ctx) }()
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
		t.Errorf("SyncLoop returned %v", err)
	}
	if d := cmp.Diff(seen, []string{TriggerStart, TriggerNotify, TriggerPeriodic}); d != "" {
		t.Errorf("sync triggers (-got +want):\n%s", d)
	}
}

func TestNodeThatCannotBeReadLeavesTheStateUnchanged(t *testing.T) {
	h := newHarness(t, nil)
	h.agent.Source = failingReader{}
	res := h.sync(time.Second)
	if res.Observed || h.agent.st.policy.Decision().LastObservations != nil {
		t.Errorf("observed %t, state %+v: want nothing decided", res.Observed, h.agent.st.policy.Decision())
	}
}

type failingReader struct{}

func (failingReader) ReadNode(time.Time) (signal.Snapshot, error) {
	return signal.Snapshot{}, errors.New("no cgroup")
}

func (failingReader) ReadPods(*signal.Snapshot, time.Time) error { return errors.New("no cgroup") }

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
