package explain

import (
	"math"
	"testing"
)

func TestHumanPrintsOneDecimalOnlyWhereNeeded(t *testing.T) {
	const mi, gi = int64(1) << 20, int64(1) << 30
	for _, tc := range []struct {
		name string
		v    int64
		u    unit
		want string
	}{
		{"zero bytes", 0, unitBytes, "0"},
		{"bytes below a kibibyte stay plain", 512, unitBytes, "512B"},
		{"exact mebibytes have no decimal", 100 * mi, unitBytes, "100Mi"},
		{"inexact gibibytes get one decimal", 1948 * mi, unitBytes, "1.9Gi"},
		{"a value just above a gibibyte shows it is inexact", gi + 16, unitBytes, "1.0Gi"},
		{"negative margins keep their sign", -50 * mi, unitBytes, "-50Mi"},
		{"the smallest int64 does not overflow", math.MinInt64, unitBytes, "-8Ei"},
		{"counts use decimal suffixes", 300000, unitCount, "300k"},
		{"inexact counts get one decimal", 6553600, unitCount, "6.6M"},
		{"millicores print as a quantity", 3900, unitMillicores, "3900m"},
		{"whole cores print as a quantity", 4000, unitMillicores, "4"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := human(tc.v, tc.u); got != tc.want {
				t.Errorf("human(%d, %v) = %q, want %q", tc.v, tc.u, got, tc.want)
			}
		})
	}
}

func TestExactPrintsIntegersAndMillicores(t *testing.T) {
	if got := exact(13883146240, unitBytes); got != "13883146240" {
		t.Errorf("exact bytes = %q", got)
	}
	if got := exact(3900, unitMillicores); got != "3900m" {
		t.Errorf("exact millicores = %q", got)
	}
}
