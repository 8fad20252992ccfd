package threshold

import (
	"math"
	"sort"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kube-pressure/pressure/internal/signal"
)

// Operator is the comparison of a threshold. The kubelet knows only LessThan.
type Operator string

// LessThan is met when the observed available amount is strictly below the threshold quantity.
// The empty Operator marks an inert threshold (see UpdateContainerFsThresholds).
const LessThan Operator = "<"

// Value is a threshold or minimum-reclaim amount: exactly one of Quantity (an absolute amount) or
// Percentage (a fraction of capacity in [0, 1], float32 like the kubelet) is meaningful. A nil
// Quantity means the value is a percentage.
type Value struct {
	Quantity   *resource.Quantity
	Percentage float32
}

// Resolve returns the amount the value stands for against capacity: the literal quantity, or
// int64(float64(capacity) * float64(Percentage)) truncated, exactly as the kubelet's
// GetThresholdQuantity (10% of 100Gi = 10737418400 because 0.1 is a float32).
func (v Value) Resolve(capacity int64) int64 {
	if v.Quantity != nil {
		return Amount(*v.Quantity, false)
	}
	return int64(float64(capacity) * float64(v.Percentage))
}

// Amount returns q as an int64, in thousandths when milli (cpu), saturated at math.MaxInt64: the
// kubelet compares such quantities exactly (a reservation of 1e30 exceeds every capacity), while
// Quantity.Value returns 0 for values beyond int64 that it keeps as decimals (1e30) and MilliValue
// wraps (99999999Ei of cpu).
func Amount(q resource.Quantity, milli bool) int64 {
	limit := resource.NewQuantity(math.MaxInt64, resource.DecimalSI)
	if milli {
		limit = resource.NewMilliQuantity(math.MaxInt64, resource.DecimalSI)
	}
	if q.Cmp(*limit) >= 0 {
		return math.MaxInt64
	}
	if milli {
		return q.MilliValue()
	}
	return q.Value()
}

// addSat adds two non-negative amounts, saturating at math.MaxInt64.
func addSat(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// IsPercentage reports whether the value is a fraction of capacity.
func (v Value) IsPercentage() bool { return v.Quantity == nil }

// String renders the value as configured: "100Mi" or "10%".
func (v Value) String() string {
	if v.Quantity != nil {
		return v.Quantity.String()
	}
	return formatPercentage(v.Percentage)
}

// formatPercentage prints the shortest "N%" that parses back to exactly p.
func formatPercentage(p float32) string {
	for prec := 0; prec <= 12; prec++ {
		s := strconv.FormatFloat(float64(p)*100, 'f', prec, 64) + "%"
		if back, err := parsePercentage(s); err == nil && back == p {
			return s
		}
	}
	return strconv.FormatFloat(float64(p)*100, 'g', -1, 64) + "%"
}

// Threshold is one parsed eviction threshold.
type Threshold struct {
	Signal   signal.Signal
	Operator Operator
	Value    Value
	// GracePeriod is how long the threshold must be met before evicting; zero means hard.
	GracePeriod time.Duration
	// MinReclaim is the extra amount to reclaim beyond the threshold; nil means none.
	MinReclaim *Value
	// FromSoft is true for a threshold configured under evictionSoft. A soft threshold with grace
	// "0s" is hard, but the kubelet lists it after the evictionHard ones, which decides which of two
	// hard thresholds on one signal the containerfs thresholds copy.
	FromSoft bool
}

// IsHard reports whether the threshold acts immediately. Like the kubelet this is GracePeriod == 0,
// so a soft threshold configured with grace "0s" is hard.
func (t Threshold) IsHard() bool { return t.GracePeriod == 0 }

// Inert reports whether the threshold can never be met (no operator; a containerfs threshold
// derived from a missing source threshold).
func (t Threshold) Inert() bool { return t.Operator != LessThan }

// String renders the threshold as "memory.available<100Mi" plus grace and min-reclaim when set.
func (t Threshold) String() string {
	s := string(t.Signal) + string(t.Operator) + t.Value.String()
	if t.Inert() {
		s = string(t.Signal) + " (inert)"
	}
	if !t.IsHard() {
		s += " grace=" + t.GracePeriod.String()
	}
	if t.MinReclaim != nil {
		s += " minReclaim=" + t.MinReclaim.String()
	}
	return s
}

// Config is the parsed eviction configuration of a kubelet.
type Config struct {
	// Thresholds is sorted by signal name, then hard before soft, then by grace period, then by
	// value (see SortThresholds). Map order never reaches it.
	Thresholds []Threshold
	// PressureTransitionPeriod is how long a node condition lingers after its threshold stops being met.
	PressureTransitionPeriod time.Duration
	// MaxPodGracePeriodSeconds caps the pod's grace period on soft eviction (0: use the pod's own).
	MaxPodGracePeriodSeconds int32
	// KernelMemcgNotification enables memcg threshold notifications.
	KernelMemcgNotification bool
	// EnforceNodeAllocatable is the kubelet's enforceNodeAllocatable list as configured.
	EnforceNodeAllocatable []string
	// ExperimentalAllocatableIgnoreEviction disables the hard-eviction reservation and the
	// allocatableMemory.available copies.
	ExperimentalAllocatableIgnoreEviction bool
	// KubeReserved and SystemReserved are the reservations by resource name ("memory", "cpu",
	// "ephemeral-storage", "pid").
	KubeReserved   map[string]resource.Quantity
	SystemReserved map[string]resource.Quantity
	// ReservationThresholds are the thresholds parsed from the effective evictionHard map alone
	// (no soft thresholds, no allocatable copies, no min-reclaim), which the kubelet's container
	// manager uses for the hard-eviction reservation of node allocatable. Empty when
	// ExperimentalAllocatableIgnoreEviction is set.
	ReservationThresholds []Threshold
	// ImageGCHighThresholdPercent is the kubelet's imageGCHighThresholdPercent (nil: unset, the default
	// DefaultImageGCHighThresholdPercent). Not an eviction setting: the agent keeps its disk thresholds
	// below the image GC's start (ImageGCHigh).
	ImageGCHighThresholdPercent *int32
}

// ImageGCHigh returns the usage percentage at which the kubelet's image GC starts (100: never).
func (c Config) ImageGCHigh() int32 {
	if c.ImageGCHighThresholdPercent == nil {
		return DefaultImageGCHighThresholdPercent
	}
	return *c.ImageGCHighThresholdPercent
}

// PodsEnforced reports whether the pods cgroup is limited to node allocatable.
func (c Config) PodsEnforced() bool {
	for _, e := range c.EnforceNodeAllocatable {
		if e == "pods" {
			return true
		}
	}
	return false
}

// SortThresholds sorts thresholds into the Config order: signal name, hard before soft, grace
// period, quantity before percentage, value, then thresholds without min-reclaim first and by
// min-reclaim. Equal keys mean equal thresholds, so the order is total.
func SortThresholds(ts []Threshold) {
	sort.SliceStable(ts, func(i, j int) bool { return less(ts[i], ts[j]) })
}

func less(a, b Threshold) bool {
	if a.Signal != b.Signal {
		return a.Signal < b.Signal
	}
	if a.IsHard() != b.IsHard() {
		return a.IsHard()
	}
	if a.GracePeriod != b.GracePeriod {
		return a.GracePeriod < b.GracePeriod
	}
	if a.Operator != b.Operator {
		return a.Operator > b.Operator // real thresholds before inert ones
	}
	if c := cmpValue(&a.Value, &b.Value); c != 0 {
		return c < 0
	}
	if c := cmpValue(a.MinReclaim, b.MinReclaim); c != 0 {
		return c < 0
	}
	return !a.FromSoft && b.FromSoft
}

// cmpValue orders nil first, then quantities by amount, then percentages by fraction.
func cmpValue(a, b *Value) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return -1
	case b == nil:
		return 1
	case a.IsPercentage() != b.IsPercentage():
		if a.IsPercentage() {
			return 1
		}
		return -1
	case a.IsPercentage():
		switch {
		case a.Percentage < b.Percentage:
			return -1
		case a.Percentage > b.Percentage:
			return 1
		}
		return 0
	}
	return a.Quantity.Cmp(*b.Quantity)
}
