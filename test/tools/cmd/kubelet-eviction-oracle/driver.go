package main

// How the manager is driven. synchronize is unexported (v1.34 to v1.37); the exported entry points are
// Start (a goroutine looping over synchronize), the memcg notifier (real cgroup files) and Admit /
// IsUnder*Pressure (read-only). We use Start, unmodified, and gate its loop:
//
//   - synchronize calls the active-pods function once, before it reads the clock or the summary. Our
//     active-pods function reports "idle" and blocks until the driver releases the next step, after
//     setting the fake clock, the Summary and the pods. So exactly one synchronize runs per step.
//   - After a synchronize that evicted nothing, Start sleeps monitoringInterval in real time (we pass
//     1 ms) and calls synchronize again, which blocks in the active-pods function: the step is over.
//   - After one that evicted, Start calls waitForPodsCleanup, which waits on a 30 s timer and a 1 s
//     ticker of the manager's clock (our fake clock). The step is over once both are registered
//     (FakeClock.Waiters grows by 2); the next step's SetTime (>= 1 s later) fires the ticker, the
//     pod-cleaned-up function says yes, and the loop proceeds to the next synchronize.
//
// State is only inspected while the loop is blocked, so nothing races with synchronize.

import (
	"fmt"
	"sort"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/component-base/metrics/testutil"
	"k8s.io/kubernetes/pkg/kubelet/eviction"
	"k8s.io/kubernetes/pkg/kubelet/lifecycle"
	kubeletmetrics "k8s.io/kubernetes/pkg/kubelet/metrics"
	testingclock "k8s.io/utils/clock/testing"
)

const (
	monitoringInterval = time.Millisecond
	stepTimeout        = 20 * time.Second
	// cleanupWaiters is what waitForPodsCleanup adds to the fake clock: a timer and a ticker.
	cleanupWaiters = 2
)

type driver struct {
	w       *world
	clock   *testingclock.FakeClock
	mgr     eviction.Manager
	admit   lifecycle.PodAdmitHandler
	idle    chan struct{}
	release chan []*v1.Pod
	// parked is true when the loop is known to be blocked in the active-pods function.
	parked bool
}

func runCase(c *Case) (*Result, error) {
	kc, err := loadConfig(c.KubeletConfig)
	if err != nil {
		return &Result{ConfigError: err.Error()}, nil
	}
	if err := applyFeatureGates(kc.FeatureGates); err != nil {
		return &Result{ConfigError: err.Error()}, nil
	}
	cfg, err := evictionConfig(kc, c.ExperimentalAllocatableIgnoreEviction)
	if err != nil {
		return &Result{ConfigError: err.Error()}, nil
	}
	kubeletmetrics.Register()
	start := time.UnixMilli(c.StartUnixMilli).UTC()
	d := &driver{
		w:       &world{dedicatedImageFs: c.DedicatedImageFs, splitContainerFs: c.SplitContainerFs},
		clock:   testingclock.NewFakeClock(start),
		idle:    make(chan struct{}),
		release: make(chan []*v1.Pod),
	}
	// With no thresholds and no local-storage isolation, synchronize returns before it calls the
	// active-pods function or reads anything: the loop cannot be gated, and each step only reads the
	// (unchanging) state. A long interval keeps the loop asleep.
	idle := len(cfg.Thresholds) == 0 && !kc.LocalStorageCapacityIsolation
	interval := monitoringInterval
	if idle {
		interval = time.Hour
	}
	nodeRef := &v1.ObjectReference{Kind: "Node", Name: "node", UID: "node", Namespace: ""}
	d.mgr, d.admit = eviction.NewManager(summaryProvider{d.w}, cfg, d.w.kill, gc{d.w}, gc{d.w}, recorder{d.w},
		nodeRef, d.clock, kc.LocalStorageCapacityIsolation)
	d.w.resetStep(&Step{})
	podFunc := func() []*v1.Pod {
		d.idle <- struct{}{}
		return <-d.release
	}
	cleanedUp := func(*v1.Pod) bool { return true }
	startManager(d.mgr, diskInfo{d.w}, podFunc, cleanedUp, interval)

	res := &Result{}
	evicted := map[string]bool{}
	inCleanup := false
	lastOffset := int64(-1 << 62)
	for i := range c.Steps {
		s := &c.Steps[i]
		if s.OffsetMillis <= lastOffset || (inCleanup && s.OffsetMillis-lastOffset < 1000) {
			return nil, fmt.Errorf("step %d: offset %d ms must be after %d ms (by 1000 ms after an eviction)",
				i, s.OffsetMillis, lastOffset)
		}
		lastOffset = s.OffsetMillis
		if idle {
			d.w.resetStep(s)
			d.clock.SetTime(start.Add(time.Duration(s.OffsetMillis) * time.Millisecond))
			before, err := evictionCounts()
			if err != nil {
				return nil, fmt.Errorf("step %d: %w", i, err)
			}
			sr, err := d.collect(before, evicted, c.Probes)
			if err != nil {
				return nil, fmt.Errorf("step %d: %w", i, err)
			}
			res.Steps = append(res.Steps, sr)
			continue
		}
		sr, err := d.step(s, start, evicted, c.DropEvicted, &inCleanup, c.Probes)
		if err != nil {
			return nil, fmt.Errorf("step %d: %w", i, err)
		}
		res.Steps = append(res.Steps, sr)
	}
	return res, nil
}

func (d *driver) step(s *Step, start time.Time, evicted map[string]bool, drop bool, inCleanup *bool,
	probes []v1.Pod) (StepResult, error) {
	if *inCleanup && d.parked {
		return StepResult{}, fmt.Errorf("driver confused: parked and in cleanup")
	}
	d.w.resetStep(s)
	before, err := evictionCounts()
	if err != nil {
		return StepResult{}, err
	}
	d.clock.SetTime(start.Add(time.Duration(s.OffsetMillis) * time.Millisecond))
	if !d.parked { // first step, or after an eviction: SetTime released the cleanup wait
		if err := d.waitIdle(); err != nil {
			return StepResult{}, err
		}
	}
	d.parked = false
	base := d.clock.Waiters()
	var pods []*v1.Pod
	for i := range s.Pods {
		if drop && evicted[string(s.Pods[i].UID)] {
			continue
		}
		pods = append(pods, s.Pods[i].DeepCopy())
	}
	d.release <- pods
	*inCleanup = false
	deadline := time.Now().Add(stepTimeout)
	for done := false; !done; {
		select {
		case <-d.idle:
			// The loop came back to the active-pods function: it evicted nothing.
			d.parked = true
			done = true
		case <-time.After(time.Millisecond):
			if d.w.killCount() > 0 && d.clock.Waiters() >= base+cleanupWaiters {
				*inCleanup = true
				done = true
			}
			if time.Now().After(deadline) {
				return StepResult{}, fmt.Errorf("synchronize did not finish within %s", stepTimeout)
			}
		}
	}
	return d.collect(before, evicted, probes)
}

// waitIdle waits until the loop is blocked in the active-pods function.
func (d *driver) waitIdle() error {
	select {
	case <-d.idle:
		return nil
	case <-time.After(stepTimeout):
		return fmt.Errorf("eviction loop did not come back to the active-pods function within %s", stepTimeout)
	}
}

func (d *driver) collect(before map[string]float64, evicted map[string]bool, probes []v1.Pod) (StepResult, error) {
	d.w.mu.Lock()
	sr := StepResult{
		Evictions: d.w.evictions, NodeEvents: d.w.nodeEvents, ContainerGC: d.w.containerGC, ImageGC: d.w.imageGC,
		SummaryCalls: d.w.summaryCalls,
	}
	d.w.mu.Unlock()
	for _, e := range sr.Evictions {
		evicted[e.UID] = true
	}
	sr.MemoryPressure = d.mgr.IsUnderMemoryPressure()
	sr.DiskPressure = d.mgr.IsUnderDiskPressure()
	sr.PIDPressure = d.mgr.IsUnderPIDPressure()
	for i := range probes {
		r := admit(d.admit, probes[i].DeepCopy())
		sr.Admissions = append(sr.Admissions, Admission{Name: probes[i].Name, Admit: r.Admit, Reason: r.Reason, Message: r.Message})
	}
	after, err := evictionCounts()
	if err != nil {
		return sr, err
	}
	for _, k := range sortedKeys(after) {
		if dv := after[k] - before[k]; dv != 0 {
			if sr.EvictionCounts == nil {
				sr.EvictionCounts = map[string]float64{}
			}
			sr.EvictionCounts[k] = dv
		}
	}
	return sr, nil
}

// evictionCounts reads kubelet_evictions by eviction_signal.
func evictionCounts() (map[string]float64, error) {
	m, err := testutil.GetCounterValuesFromGatherer(legacyregistry.DefaultGatherer, "kubelet_evictions",
		map[string]string{}, "eviction_signal")
	if err != nil {
		return map[string]float64{}, nil //nolint:nilerr // no sample yet: the counter vector is empty
	}
	return m, nil
}

func sortedKeys(m map[string]float64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
