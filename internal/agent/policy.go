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

// Headroom is how far above the kubelet's hard thresholds the pressure policy acts. For a byte signal the
// headroom is max(MinBytes, Percent of capacity); for a count signal (inodes, pids) it is Percent of
// capacity.
type Headroom struct {
	MinBytes int64
	Percent  float64
}

// DefaultHeadroom is 256Mi or 5% of capacity, whichever is larger. At a ramp of 1 GiB/s, 256Mi is a
// quarter of a second: about ten times what detection (a memcg or poll wake-up), the Eviction API round
// trip and the kubelet's SIGTERM take together on an idle node, and the 5% keeps the margin in proportion
// on large nodes (1.2 GiB on a 24 GiB node).
var DefaultHeadroom = Headroom{MinBytes: 256 << 20, Percent: 5}

// DefaultMinReclaimBytes is the minimum reclaim the pressure policy adds to a byte threshold that has
// none of its own (evictionMinimumReclaim), so that a workload still ramping does not re-cross the
// threshold immediately after an eviction.
const DefaultMinReclaimBytes = 100 << 20

// amount returns the headroom for a signal with the given capacity.
func (h Headroom) amount(sig signal.Signal, capacity int64) int64 {
	pct := int64(float64(capacity) * h.Percent / 100)
	if sig.Bytes() {
		return max(h.MinBytes, pct)
	}
	return pct
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
