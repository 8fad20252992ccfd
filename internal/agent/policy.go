package agent

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/threshold"
)

// Policy selects the agent's thresholds and how many pods a sync may evict.
type Policy string

// Policies.
const (
	// PolicyPressure acts at the kubelet's hard thresholds raised by a headroom, on fresh node-read stats,
	// and evicts to a target. The default.
	PolicyPressure Policy = "pressure"
	// PolicyKubelet reproduces the kubelet's eviction: its thresholds, one pod per sync.
	PolicyKubelet Policy = "kubelet"
)

// Headroom is how far above the kubelet's hard threshold of each signal the pressure policy acts: an
// absolute amount or a fraction of the signal's capacity (threshold.Value). A signal without an entry
// gets no headroom.
type Headroom map[signal.Signal]threshold.Value

// DefaultHeadroom returns 256Mi for the memory signals and 5% of capacity for the disk, inode and PID
// signals (the defaults of internal/config/agent). At a ramp of 256 MiB/s, 256Mi is about a second:
// room for detection (a memcg or poll wake-up, milliseconds), the Eviction API round trip and the
// kubelet's SIGTERM before the kubelet's own threshold; disks fill in minutes, so a percentage that
// scales with the filesystem is used there.
func DefaultHeadroom() Headroom {
	h := Headroom{}
	for _, s := range signal.All() {
		if s.IsMemory() {
			h[s] = threshold.Value{Quantity: resource.NewQuantity(256<<20, resource.BinarySI)}
		} else {
			h[s] = threshold.Value{Percentage: 0.05}
		}
	}
	return h
}

// DefaultMinReclaimBytes is the minimum reclaim the pressure policy adds to a byte threshold that has
// none of its own (evictionMinimumReclaim), so that a workload still ramping does not re-cross the
// threshold immediately after an eviction.
const DefaultMinReclaimBytes = 100 << 20

// amount returns the headroom for a signal with the given capacity.
func (h Headroom) amount(sig signal.Signal, capacity int64) int64 {
	v, ok := h[sig]
	if !ok {
		return 0
	}
	if v.IsPercentage() {
		return int64(float64(capacity) * float64(v.Percentage))
	}
	return v.Quantity.Value()
}

// pressureThresholds returns the pressure policy's thresholds for the observed capacities: every hard
// threshold of the kubelet resolved against its signal's capacity and raised by the headroom, soft
// thresholds unchanged, and a default minimum reclaim on byte thresholds without one. Thresholds of
// unobserved signals are kept as configured (they are never met). The result has the same length and
// order as kc.Thresholds, so decision.State stays valid from one sync to the next.
func pressureThresholds(kc threshold.Config, snap signal.Snapshot, h Headroom) threshold.Config {
	out := kc
	out.Thresholds = make([]threshold.Threshold, len(kc.Thresholds))
	for i, t := range kc.Thresholds {
		out.Thresholds[i] = raise(t, snap, h)
	}
	return out
}

func raise(t threshold.Threshold, snap signal.Snapshot, h Headroom) threshold.Threshold {
	o, ok := snap.Observations[t.Signal]
	if t.Inert() || !ok {
		return t
	}
	if t.IsHard() {
		v := t.Value.Resolve(o.Capacity) + h.amount(t.Signal, o.Capacity)
		t.Value = threshold.Value{Quantity: quantity(v, t.Signal)}
	}
	if t.MinReclaim == nil && t.Signal.Bytes() {
		t.MinReclaim = &threshold.Value{Quantity: quantity(DefaultMinReclaimBytes, t.Signal)}
	}
	return t
}

func quantity(v int64, sig signal.Signal) *resource.Quantity {
	f := resource.DecimalSI
	if sig.Bytes() {
		f = resource.BinarySI
	}
	return resource.NewQuantity(v, f)
}

// configFor returns the thresholds the policy acts on for this snapshot.
func configFor(p Policy, kc threshold.Config, snap signal.Snapshot, h Headroom) (threshold.Config, error) {
	switch p {
	case PolicyPressure, "":
		return pressureThresholds(kc, snap, h), nil
	case PolicyKubelet:
		return kc, nil
	}
	return threshold.Config{}, fmt.Errorf("policy %q: want %q or %q", p, PolicyPressure, PolicyKubelet)
}
