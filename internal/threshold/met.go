package threshold

import (
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kube-pressure/pressure/internal/signal"
)

// ResolveQuantity returns the threshold amount for capacity as the kubelet's GetThresholdQuantity does:
// a copy of the literal quantity (keeping the format it was written in), or the truncated float32
// percentage of capacity in BinarySI format, whatever the signal.
func (v Value) ResolveQuantity(capacity int64) resource.Quantity {
	if v.Quantity != nil {
		return v.Quantity.DeepCopy()
	}
	return *resource.NewQuantity(v.Resolve(capacity), resource.BinarySI)
}

// Met reports whether t is met by obs like the kubelet's thresholdsMet: the threshold quantity
// (plus the resolved MinReclaim when enforceMinReclaim) is compared with obs.Available using exact
// quantity arithmetic, and the threshold is met only when available is strictly less. Inert
// thresholds (no operator) are never met.
func Met(t Threshold, obs signal.Observation, enforceMinReclaim bool) bool {
	if t.Operator != LessThan {
		return false
	}
	q := MetQuantity(t, obs.Capacity, enforceMinReclaim)
	return q.Cmp(*resource.NewQuantity(obs.Available, resource.BinarySI)) > 0
}

// MetQuantity is the amount available must stay at or above for t not to be met: the resolved
// threshold, plus the resolved min-reclaim when enforceMinReclaim and one is set.
func MetQuantity(t Threshold, capacity int64, enforceMinReclaim bool) resource.Quantity {
	q := t.Value.ResolveQuantity(capacity)
	if enforceMinReclaim && t.MinReclaim != nil {
		q.Add(t.MinReclaim.ResolveQuantity(capacity))
	}
	return q
}

// FormatThreshold prints the resolved threshold exactly as the kubelet's eviction message
// ("Threshold quantity: %v"): a literal quantity in its own canonical form ("1.5Gi" → "1536Mi",
// "500000" → "500k"), a percentage in BinarySI even for inodes and pids (5% of 6553600 inodes →
// "320Ki", 10% of 10Gi → "1073741840").
func FormatThreshold(v Value, capacity int64) string {
	q := v.ResolveQuantity(capacity)
	return q.String()
}

// FormatAvailable prints an observed available amount as the kubelet does: BinarySI for byte
// signals ("50Mi"), DecimalSI for inode and pid signals ("300k").
func FormatAvailable(available int64, sig signal.Signal) string {
	return FormatQuantity(available, sig.Bytes())
}

// FormatQuantity prints v in canonical BinarySI (binary=true) or DecimalSI form.
func FormatQuantity(v int64, binary bool) string {
	format := resource.DecimalSI
	if binary {
		format = resource.BinarySI
	}
	return resource.NewQuantity(v, format).String()
}
