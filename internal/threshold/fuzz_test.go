package threshold

import (
	"math"
	"strings"
	"testing"

	"github.com/kube-pressure/pressure/internal/signal"
)

func checkThreshold(t *testing.T, th Threshold) {
	t.Helper()
	if !th.Signal.Valid() || th.Operator != LessThan {
		t.Fatalf("invalid threshold %+v", th)
	}
	checkValue(t, th.Value, false)
	if th.MinReclaim != nil {
		checkValue(t, *th.MinReclaim, true)
	}
}

func checkValue(t *testing.T, v Value, reclaim bool) {
	t.Helper()
	if v.Quantity != nil {
		if v.Quantity.Sign() < 0 || (!reclaim && v.Quantity.IsZero()) || v.Percentage != 0 {
			t.Fatalf("invalid quantity value %v", v)
		}
		return
	}
	p := float64(v.Percentage)
	// NaN passes the kubelet's range checks (NaN < 0 and NaN > 1 are both false); kept as a quirk.
	if p < 0 || p > 1 || (reclaim && p <= 0) || (math.IsInf(p, 0)) {
		t.Fatalf("invalid percentage value %v", v)
	}
	_ = v.Resolve(1 << 40) // must not panic
	_ = v.String()
}

func FuzzParseThresholdStatement(f *testing.F) {
	for _, s := range [][2]string{{"memory.available", "100Mi"}, {"nodefs.available", "10%"},
		{"memory.available", "0%"}, {"memory.available", "150%"}, {"memory.free", "1Gi"},
		{"pid.available", "1.5"}, {"nodefs.inodesFree", "NaN%"}, {"imagefs.available", "-0%"},
		{"memory.available", "9E"}, {"memory.available", "1e-3%"}, {"memory.available", "10%%"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, sig, val string) {
		th, ok, err := ParseThresholdStatement(sig, val)
		if err != nil {
			if ok {
				t.Fatalf("ok with error %v", err)
			}
			return
		}
		if !ok {
			if val != "0%" && val != "100%" {
				t.Fatalf("%q dropped without error", val)
			}
			return
		}
		checkThreshold(t, th)
		_ = FormatThreshold(th.Value, 1<<30)
		// A parsed threshold can be compared: an exponent that makes the comparison loop for days
		// (testdata/fuzz/.../huge-exponent) is refused by ParseQuantity; the fuzzer reports a hang.
		_ = Met(th, signal.Observation{Available: 1 << 30, Capacity: 8 << 30}, true)
		_, _ = ParseMinimumReclaim(sig, val)
		_, _ = ParseGracePeriod(sig, val)
	})
}

func FuzzParseFlagMap(f *testing.F) {
	for _, s := range []string{"memory.available<100Mi, nodefs.available<10%", "memory.available>100Mi",
		",,", "a<b<c", "memory.available=1m30s", " = "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, parse := range []func(string) (map[string]string, error){ParseFlagMap, ParseKeyValueFlagMap} {
			m, err := parse(s)
			if err != nil {
				if m != nil {
					t.Fatalf("map %v with error %v", m, err)
				}
				continue
			}
			for k, v := range m {
				if k != strings.TrimSpace(k) || v != strings.TrimSpace(v) || strings.Contains(k, ",") {
					t.Fatalf("untrimmed or unsplit pair %q=%q from %q", k, v, s)
				}
			}
		}
	})
}

// FuzzParseConfig builds the four maps from flag-form strings and checks that ParseConfig either
// fails or returns only valid, sorted thresholds.
func FuzzParseConfig(f *testing.F) {
	f.Add("memory.available<100Mi", "memory.available<1Gi", "memory.available=1m", "memory.available=10%", true, false, "pods")
	f.Add("", "", "", "", false, true, "")
	f.Add("nodefs.available<0.0%,imagefs.available<NaN%", "", "", "nodefs.available=0Mi", true, true, "pods,none")
	f.Add("memory.available<0", "pid.available<100", "pid.available=-1s", "x=1", true, false, "pods")
	f.Fuzz(func(t *testing.T, hard, soft, grace, reclaim string, hardSet, merge bool, enforce string) {
		in := Input{EvictionHardSet: hardSet, MergeDefaultEvictionSettings: merge, EnforceNodeAllocatableSet: true,
			EnforceNodeAllocatable: strings.Split(enforce, ",")}
		var err error
		if in.EvictionHard, err = ParseFlagMap(hard); err != nil {
			return
		}
		if in.EvictionSoft, err = ParseFlagMap(soft); err != nil {
			return
		}
		if in.EvictionSoftGracePeriod, err = ParseKeyValueFlagMap(grace); err != nil {
			return
		}
		if in.EvictionMinimumReclaim, err = ParseKeyValueFlagMap(reclaim); err != nil {
			return
		}
		cfg, err := ParseConfig(in)
		if err != nil {
			if cfg.Thresholds != nil {
				t.Fatalf("thresholds returned with error %v", err)
			}
			return
		}
		for i, th := range cfg.Thresholds {
			checkThreshold(t, th)
			if i > 0 && less(th, cfg.Thresholds[i-1]) {
				t.Fatalf("thresholds not sorted at %d: %v", i, summary(cfg.Thresholds))
			}
		}
		_, _ = Allocatable(map[string]int64{"memory": 1 << 34, "ephemeral-storage": 1 << 36, "cpu": 4000}, cfg)
	})
}
