package agent

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	testingclock "k8s.io/utils/clock/testing"

	"github.com/kube-pressure/pressure/internal/threshold"
)

func TestKubeletDefaultsParse(t *testing.T) {
	kc, err := kubeletDefaults()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, th := range kc.Thresholds {
		got = append(got, th.String())
	}
	if !strings.Contains(strings.Join(got, " "), "memory.available<100Mi") {
		t.Errorf("the kubelet's default thresholds %v lack memory.available<100Mi", got)
	}
}

// refresherRun runs k from last with loads answered in order from answers (nil config: the error) and
// returns what it handed over and its log.
type refresherRun struct {
	k    *kubeletRefresher
	clk  *testingclock.FakeClock
	logs *lockedBuffer
	mu   sync.Mutex
	left []func() (threshold.Config, error)
}

func newRefresherRun(t *testing.T, pending bool, answers ...func() (threshold.Config, error)) *refresherRun {
	r := &refresherRun{clk: testingclock.NewFakeClock(t0), logs: &lockedBuffer{}, left: answers}
	r.k = &kubeletRefresher{Source: "kubelet.yaml", Every: time.Minute, Clock: r.clk, Log: slog.New(slog.NewTextHandler(r.logs, nil)),
		OnErr: func() {}, Updates: make(chan threshold.Config, 10), Pending: pending, Backoff: backoff{Min: time.Second, Max: 10 * time.Second},
		Load: func(context.Context) (threshold.Config, error) {
			r.mu.Lock()
			defer r.mu.Unlock()
			if len(r.left) == 0 {
				t.Error("more loads than answers")
				return threshold.Config{}, errors.New("no answer")
			}
			f := r.left[0]
			r.left = r.left[1:]
			return f()
		}}
	return r
}

// step waits until the refresher waits, then advances the clock by d.
func (r *refresherRun) step(d time.Duration) {
	for !r.clk.HasWaiters() {
		time.Sleep(time.Millisecond)
	}
	r.clk.Step(d)
}

func (r *refresherRun) drained() {
	for {
		r.mu.Lock()
		n := len(r.left)
		r.mu.Unlock()
		if n == 0 {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

func TestKubeletRefresherHandsOverOnlyChangesAndWarnsOncePerOutage(t *testing.T) {
	old := kubeletConfig(t, map[string]string{"memory.available": "100Mi"})
	raised := kubeletConfig(t, map[string]string{"memory.available": "400Mi"})
	same := func() (threshold.Config, error) {
		return kubeletConfig(t, map[string]string{"memory.available": "100Mi"}), nil
	}
	gone := func() (threshold.Config, error) {
		return threshold.Config{}, errors.New("open kubelet.yaml: no such file")
	}
	r := newRefresherRun(t, false, same, gone, gone, gone, func() (threshold.Config, error) { return raised, nil })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go r.k.run(ctx, old)
	for i := 0; i < 5; i++ {
		r.step(time.Minute)
	}
	r.drained()
	select {
	case got := <-r.k.Updates:
		if !strings.Contains(strings.Join(thresholdStrings(got), " "), "memory.available<400Mi") {
			t.Errorf("handed over %v, want the raised threshold", thresholdStrings(got))
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("the changed configuration was not handed over; log:\n%s", r.logs)
	}
	if len(r.k.Updates) != 0 {
		t.Errorf("more than one configuration handed over: the unchanged one must not be")
	}
	logs := r.logs.String()
	for msg, want := range map[string]int{"kubelet config unreadable": 1, "kubelet config readable again": 1, "kubelet config changed": 1} {
		if n := strings.Count(logs, msg); n != want {
			t.Errorf("%d %q lines, want %d:\n%s", n, msg, want, logs)
		}
	}
}

func TestKubeletRefresherRetriesAPendingConfigWithBackoff(t *testing.T) {
	defaults, err := kubeletDefaults()
	if err != nil {
		t.Fatal(err)
	}
	down := func() (threshold.Config, error) {
		return threshold.Config{}, errors.New("dial tcp: connection refused")
	}
	up := func() (threshold.Config, error) { return defaults, nil } // even the same thresholds are handed over: they are now known
	r := newRefresherRun(t, true, down, down, up)
	r.k.Every = 0 // read only at start: it stops after the first answer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() {
		r.k.run(ctx, defaults)
		close(done)
	}()
	r.step(time.Second)     // first retry after 1s
	r.step(2 * time.Second) // then 2s
	r.step(4 * time.Second) // then 4s: answered
	select {
	case <-r.k.Updates:
	case <-time.After(5 * time.Second):
		t.Fatalf("no configuration handed over; log:\n%s", r.logs)
	}
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Errorf("the refresher did not stop after the first answer with kubeletConfigRefresh 0")
	}
	if strings.Contains(r.logs.String(), "unreadable") {
		t.Errorf("a pending read warned per failure (the start already said /configz did not answer):\n%s", r.logs)
	}
}
