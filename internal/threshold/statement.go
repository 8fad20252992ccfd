package threshold

import (
	"strconv"
	"strings"
	"time"

	"github.com/kube-pressure/pressure/internal/signal"
)

// ParseThresholdStatement parses one evictionHard/evictionSoft entry like the kubelet's
// parseThresholdStatement. It returns ok=false without error for the literal values "0%" and
// "100%", which the kubelet silently drops. The returned threshold has no grace period.
func ParseThresholdStatement(sig, val string) (t Threshold, ok bool, err error) {
	s := signal.Signal(sig)
	if !s.Valid() {
		return Threshold{}, false, kubeletErrorf(ErrUnsupportedSignal, "unsupported eviction signal %v", sig)
	}
	if strings.HasSuffix(val, "%") {
		if val == "0%" || val == "100%" {
			return Threshold{}, false, nil
		}
		pct, err := parsePercentage(val)
		if err != nil {
			return Threshold{}, false, err
		}
		if pct < 0 {
			return Threshold{}, false, kubeletErrorf(ErrInvalidValue,
				"eviction percentage threshold %v must be >= 0%%: %s", sig, val)
		}
		if pct > 1 {
			return Threshold{}, false, kubeletErrorf(ErrInvalidValue,
				"eviction percentage threshold %v must be <= 100%%: %s", sig, val)
		}
		return Threshold{Signal: s, Operator: LessThan, Value: Value{Percentage: pct}}, true, nil
	}
	q, err := ParseQuantity(val)
	if err != nil {
		return Threshold{}, false, invalid(err)
	}
	if q.Sign() < 0 || q.IsZero() {
		return Threshold{}, false, kubeletErrorf(ErrInvalidValue,
			"eviction threshold %v must be positive: %s", sig, q.String())
	}
	return Threshold{Signal: s, Operator: LessThan, Value: Value{Quantity: &q}}, true, nil
}

// parsePercentage parses "12.5%" into float32(12.5)/100, the float32 division included. Like the
// kubelet it trims every trailing '%' and accepts whatever strconv.ParseFloat accepts at 32 bits
// ("NaN%" and "1e-3%" included).
func parsePercentage(val string) (float32, error) {
	f, err := strconv.ParseFloat(strings.TrimRight(val, "%"), 32)
	if err != nil {
		return 0, invalid(err)
	}
	return float32(f) / 100, nil
}

// ParseGracePeriod parses one evictionSoftGracePeriod entry like the kubelet's parseGracePeriods.
// Zero is accepted (the soft threshold then behaves as a hard one).
func ParseGracePeriod(sig, val string) (time.Duration, error) {
	if !signal.Signal(sig).Valid() {
		return 0, kubeletErrorf(ErrUnsupportedSignal, "unsupported eviction signal %v", sig)
	}
	d, err := time.ParseDuration(val)
	if err != nil {
		return 0, invalid(err)
	}
	if d < 0 {
		return 0, kubeletErrorf(ErrInvalidValue,
			"invalid eviction grace period specified: %v, must be a positive value", val)
	}
	return d, nil
}

// ParseMinimumReclaim parses one evictionMinimumReclaim entry like the kubelet's
// parseMinimumReclaims: percentages must be > 0, quantities >= 0.
func ParseMinimumReclaim(sig, val string) (Value, error) {
	if !signal.Signal(sig).Valid() {
		return Value{}, kubeletErrorf(ErrUnsupportedSignal, "unsupported eviction signal %v", sig)
	}
	if strings.HasSuffix(val, "%") {
		pct, err := parsePercentage(val)
		if err != nil {
			return Value{}, err
		}
		if pct <= 0 {
			return Value{}, kubeletErrorf(ErrInvalidValue,
				"eviction percentage minimum reclaim %v must be positive: %s", sig, val)
		}
		return Value{Percentage: pct}, nil
	}
	q, err := ParseQuantity(val)
	if err != nil {
		return Value{}, invalid(err)
	}
	if q.Sign() < 0 {
		return Value{}, kubeletErrorf(ErrInvalidValue, "negative eviction minimum reclaim specified for %v", sig)
	}
	return Value{Quantity: &q}, nil
}
