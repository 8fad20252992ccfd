package threshold

import (
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
)

// MaxExponent bounds the decimal exponent of a quantity ParseQuantity accepts: 10^40 is far beyond
// every capacity (math.MaxInt64 is about 9.2e18) and 10^-40 far below every useful fraction.
const MaxExponent = 40

// ParseQuantity is resource.ParseQuantity for quantities that are compared or converted afterwards.
// resource.Quantity's Cmp, Value and AsInt64 loop once per power of ten of the exponent, so a quantity
// such as "1E2000000003000003" (or a zero written "0E2000000003000003") makes the first comparison run
// for days, and resource.ParseQuantity itself does so for "1E-2000000003000003": the kubelet accepts
// such a threshold and its eviction manager then never returns. It is refused here, before
// resource.ParseQuantity sees it, with an error naming the value; a zero is returned as a plain zero.
func ParseQuantity(s string) (resource.Quantity, error) {
	if e, ok := writtenExponent(s); ok && (e > 2*MaxExponent || e < -2*MaxExponent) {
		return resource.Quantity{}, fmt.Errorf("quantity %q is out of range: its exponent is beyond ±%d", s, 2*MaxExponent)
	}
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return q, err
	}
	if q.IsZero() {
		return *resource.NewQuantity(0, q.Format), nil
	}
	if e := exponent(q); e > MaxExponent || e < -MaxExponent {
		return resource.Quantity{}, fmt.Errorf("quantity %q is out of range: about 10^%d, want between 10^-%d and 10^%d",
			s, e, MaxExponent, MaxExponent)
	}
	return q, nil
}

// exponent is the decimal exponent of q's leading digit, saturated at ±(MaxExponent+1) (q nonzero).
// It reads the unscaled digits and the scale only: no arithmetic on the exponent.
func exponent(q resource.Quantity) int64 {
	d := q.AsDec() // q is a copy: its cached decimal does not reach the caller
	digits := int64(len(d.UnscaledBig().Text(10)))
	if d.Sign() < 0 {
		digits-- // the minus sign
	}
	scale := int64(d.Scale())
	switch {
	case scale > digits+MaxExponent:
		return -MaxExponent - 1
	case scale < digits-MaxExponent-2:
		return MaxExponent + 1
	}
	return digits - 1 - scale
}

// writtenExponent returns the decimal exponent written in s ("1.5e-3": -3), saturated at ±(1<<62),
// and false when s has none. A quantity's suffix is a binary SI suffix (Ki to Ei), a decimal SI one
// (n to E) or e/E followed by a signed integer: only the last is an exponent.
func writtenExponent(s string) (int64, bool) {
	i := strings.IndexAny(s, "eE")
	if i < 0 || i+1 >= len(s) {
		return 0, false
	}
	rest := s[i+1:]
	if rest[0] != '+' && rest[0] != '-' && (rest[0] < '0' || rest[0] > '9') {
		return 0, false
	}
	n, err := strconv.ParseInt(rest, 10, 64)
	if err != nil {
		if strings.HasPrefix(rest, "-") {
			return -1 << 62, true
		}
		return 1 << 62, true // too long for int64, or not digits: resource.ParseQuantity judges the latter
	}
	return n, true
}
