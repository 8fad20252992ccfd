package threshold

import (
	"testing"

	"github.com/kube-pressure/pressure/internal/signal"
)

func mustParse(t *testing.T, sig, val string) Threshold {
	t.Helper()
	th, ok, err := ParseThresholdStatement(sig, val)
	if err != nil || !ok {
		t.Fatalf("ParseThresholdStatement(%q, %q) = %v, %v", sig, val, ok, err)
	}
	return th
}

func TestMet(t *testing.T) {
	const gi = int64(1) << 30
	const mi = int64(1) << 20
	withReclaim := func(th Threshold, v string) Threshold {
		mr, err := ParseMinimumReclaim(string(th.Signal), v)
		if err != nil {
			t.Fatal(err)
		}
		th.MinReclaim = &mr
		return th
	}
	tests := []struct {
		name       string
		th         Threshold
		obs        signal.Observation
		minReclaim bool
		want       bool
	}{
		{"T1 available equal to the threshold is not met",
			mustParse(t, "memory.available", "100Mi"), signal.Observation{Available: 104857600, Capacity: 16 * gi}, false, false},
		{"T1 one byte below the threshold is met",
			mustParse(t, "memory.available", "100Mi"), signal.Observation{Available: 104857599, Capacity: 16 * gi}, false, true},
		{"T2 10% of 100Gi is 10737418400 so available equal to it is not met",
			mustParse(t, "nodefs.available", "10%"), signal.Observation{Available: 10737418400, Capacity: 100 * gi}, false, false},
		{"T2 exactly 10Gi available on 100Gi is met because of float32",
			mustParse(t, "nodefs.available", "10%"), signal.Observation{Available: 10 * gi, Capacity: 100 * gi}, false, true},
		{"T3 previously met threshold stays met below threshold plus min reclaim",
			withReclaim(mustParse(t, "memory.available", "100Mi"), "500Mi"), signal.Observation{Available: 300 * mi, Capacity: 16 * gi}, true, true},
		{"T3 min reclaim is ignored for the plain check",
			withReclaim(mustParse(t, "memory.available", "100Mi"), "500Mi"), signal.Observation{Available: 300 * mi, Capacity: 16 * gi}, false, false},
		{"T3 available equal to threshold plus min reclaim resolves pressure",
			withReclaim(mustParse(t, "memory.available", "100Mi"), "500Mi"), signal.Observation{Available: 600 * mi, Capacity: 16 * gi}, true, false},
		{"percentage min reclaim resolves against the observation's capacity",
			withReclaim(mustParse(t, "nodefs.available", "10%"), "5%"), signal.Observation{Available: 15 * gi, Capacity: 100 * gi}, true, true},
		{"0% threshold from -0% can never be met",
			mustParse(t, "nodefs.available", "-0%"), signal.Observation{Available: 0, Capacity: 100 * gi}, false, false},
		{"inert derived threshold is never met",
			Threshold{Signal: signal.ContainerFsAvailable}, signal.Observation{Available: 0, Capacity: 100 * gi}, false, false},
		{"fractional quantity compares exactly: 1.5 > 1",
			mustParse(t, "pid.available", "1.5"), signal.Observation{Available: 1, Capacity: 100}, false, true},
		{"fractional quantity compares exactly: 1.5 < 2",
			mustParse(t, "pid.available", "1.5"), signal.Observation{Available: 2, Capacity: 100}, false, false},
		{"huge threshold plus min reclaim does not overflow",
			withReclaim(mustParse(t, "memory.available", "9E"), "9E"), signal.Observation{Available: 1<<63 - 1, Capacity: 1<<63 - 1}, true, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Met(tc.th, tc.obs, tc.minReclaim); got != tc.want {
				t.Errorf("Met(%v, %v, %v) = %v, want %v", tc.th, tc.obs, tc.minReclaim, got, tc.want)
			}
		})
	}
}

func TestFormat(t *testing.T) {
	tests := []struct {
		name string
		got  string
		want string
	}{
		{"M4 literal 1.5Gi prints 1536Mi", FormatThreshold(mustParse(t, "memory.available", "1.5Gi").Value, 0), "1536Mi"},
		{"M4 10% of 10Gi prints the exact byte count", FormatThreshold(mustParse(t, "nodefs.available", "10%").Value, 10<<30), "1073741840"},
		{"M1 literal 100Mi prints 100Mi", FormatThreshold(mustParse(t, "memory.available", "100Mi").Value, 0), "100Mi"},
		{"M5 5% of 6553600 inodes prints BinarySI 320Ki", FormatThreshold(mustParse(t, "nodefs.inodesFree", "5%").Value, 6553600), "320Ki"},
		{"M5 available inodes print DecimalSI 300k", FormatAvailable(300000, signal.NodeFsInodesFree), "300k"},
		{"M1 available bytes print BinarySI 50Mi", FormatAvailable(52428800, signal.MemoryAvailable), "50Mi"},
		{"literal inode quantity keeps its DecimalSI form", FormatThreshold(mustParse(t, "nodefs.inodesFree", "500000").Value, 0), "500k"},
		{"literal decimal bytes keep DecimalSI form", FormatThreshold(mustParse(t, "memory.available", "1G").Value, 0), "1G"},
		{"bytes below 1024 fall back to decimal suffixes like apimachinery", FormatAvailable(1000, signal.MemoryAvailable), "1k"},
		{"bytes below 1024 without decimal suffix print plainly", FormatAvailable(512, signal.MemoryAvailable), "512"},
		{"pids print DecimalSI", FormatAvailable(4000, signal.PIDAvailable), "4k"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.got != tc.want {
				t.Errorf("got %q, want %q", tc.got, tc.want)
			}
		})
	}
}
