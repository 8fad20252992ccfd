package threshold

import (
	"math"
	"testing"
)

func TestFormatHumanRoundsForPeople(t *testing.T) {
	for _, tc := range []struct {
		v      int64
		binary bool
		want   string
	}{
		{42949674400, true, "40.0Gi"}, // 40Gi + 1440 bytes: the raised threshold of issue 34
		{100 << 20, true, "100Mi"},
		{512, true, "512B"},
		{0, true, "0"},
		{-50 << 20, true, "-50Mi"},
		{1300 << 20, true, "1.3Gi"},
		{math.MinInt64, true, "-8Ei"},
		{4194304, false, "4.2M"},
		{6000000, false, "6M"},
		{999, false, "999"},
	} {
		if got := FormatHuman(tc.v, tc.binary); got != tc.want {
			t.Errorf("FormatHuman(%d, %v) = %q, want %q", tc.v, tc.binary, got, tc.want)
		}
	}
}
