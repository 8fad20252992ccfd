package threshold

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kube-pressure/pressure/internal/signal"
)

// summary renders thresholds compactly for comparisons: "memory.available<100Mi grace=1m30s".
func summary(ts []Threshold) []string {
	out := []string{}
	for _, t := range ts {
		out = append(out, t.String())
	}
	return out
}

func set(m map[string]string) Input { return Input{EvictionHard: m, EvictionHardSet: true} }

func TestParseConfig(t *testing.T) {
	d := func(s string) *time.Duration { v, _ := time.ParseDuration(s); return &v }
	tests := []struct {
		name string
		in   Input
		want []string
	}{
		{"P1 hard memory threshold is copied to allocatableMemory.available when pods are enforced",
			set(map[string]string{"memory.available": "100Mi"}),
			[]string{"allocatableMemory.available<100Mi", "memory.available<100Mi"}},
		{"P1 no allocatable copy when enforceNodeAllocatable is empty",
			Input{EvictionHard: map[string]string{"memory.available": "100Mi"}, EvictionHardSet: true,
				EnforceNodeAllocatableSet: true, EnforceNodeAllocatable: []string{}},
			[]string{"memory.available<100Mi"}},
		{"no allocatable copy with experimental-allocatable-ignore-eviction",
			Input{EvictionHard: map[string]string{"memory.available": "100Mi"}, EvictionHardSet: true,
				ExperimentalAllocatableIgnoreEviction: true},
			[]string{"memory.available<100Mi"}},
		{"P3 0% and 100% are dropped silently",
			Input{EvictionHard: map[string]string{"memory.available": "0%", "nodefs.available": "100%"},
				EvictionHardSet: true},
			[]string{}},
		{"-0% and 0.0% are not the literal 0% and become never-met 0% thresholds",
			Input{EvictionHard: map[string]string{"nodefs.available": "0.0%", "imagefs.available": "-0%"},
				EvictionHardSet: true},
			[]string{"imagefs.available<-0%", "nodefs.available<0%"}},
		{"P7 soft threshold takes its grace period",
			Input{EvictionHardSet: true, EvictionSoft: map[string]string{"memory.available": "1.5Gi"},
				EvictionSoftGracePeriod: map[string]string{"memory.available": "1m30s"}},
			[]string{"memory.available<1536Mi grace=1m30s"}},
		{"P8 soft threshold with grace 0s is hard and copied to allocatableMemory.available",
			Input{EvictionHardSet: true, EvictionSoft: map[string]string{"memory.available": "1Gi"},
				EvictionSoftGracePeriod: map[string]string{"memory.available": "0s"}},
			[]string{"allocatableMemory.available<1Gi", "memory.available<1Gi"}},
		{"grace periods of signals without a soft threshold are ignored",
			Input{EvictionHardSet: true, EvictionSoftGracePeriod: map[string]string{"pid.available": "1m"}},
			[]string{}},
		{"P10 min reclaim is attached to hard, soft and allocatable thresholds of the signal",
			Input{EvictionHard: map[string]string{"memory.available": "100Mi", "nodefs.available": "10%"},
				EvictionHardSet:         true,
				EvictionSoft:            map[string]string{"memory.available": "1Gi"},
				EvictionSoftGracePeriod: map[string]string{"memory.available": "1m"},
				EvictionMinimumReclaim:  map[string]string{"memory.available": "0Mi", "nodefs.available": "5%"}},
			[]string{"allocatableMemory.available<100Mi minReclaim=0",
				"memory.available<100Mi minReclaim=0", "memory.available<1Gi grace=1m0s minReclaim=0",
				"nodefs.available<10% minReclaim=5%"}},
		{"P12 config without evictionHard gets the five Linux defaults",
			Input{},
			[]string{"allocatableMemory.available<100Mi", "imagefs.available<15%", "imagefs.inodesFree<5%",
				"memory.available<100Mi", "nodefs.available<10%", "nodefs.inodesFree<5%"}},
		{"P12 setting one hard threshold drops every other default",
			set(map[string]string{"memory.available": "200Mi"}),
			[]string{"allocatableMemory.available<200Mi", "memory.available<200Mi"}},
		{"P12 mergeDefaultEvictionSettings adds the missing defaults, user keys win",
			Input{EvictionHard: map[string]string{"memory.available": "200Mi"}, EvictionHardSet: true,
				MergeDefaultEvictionSettings: true},
			[]string{"allocatableMemory.available<200Mi", "imagefs.available<15%", "imagefs.inodesFree<5%",
				"memory.available<200Mi", "nodefs.available<10%", "nodefs.inodesFree<5%"}},
		{"present but empty evictionHard yields no hard thresholds (v1.36.3 loadConfigFile)",
			Input{EvictionHard: map[string]string{}, EvictionHardSet: true},
			[]string{}},
		{"signal in both hard and soft yields two independent thresholds",
			Input{EvictionHard: map[string]string{"nodefs.available": "5%"}, EvictionHardSet: true,
				EvictionSoft:            map[string]string{"nodefs.available": "10%"},
				EvictionSoftGracePeriod: map[string]string{"nodefs.available": "2m"}},
			[]string{"nodefs.available<5%", "nodefs.available<10% grace=2m0s"}},
		{"explicit allocatableMemory.available and the copy both exist",
			set(map[string]string{"memory.available": "100Mi", "allocatableMemory.available": "50Mi"}),
			[]string{"allocatableMemory.available<50Mi", "allocatableMemory.available<100Mi", "memory.available<100Mi"}},
	}
	_ = d
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := ParseConfig(tc.in)
			if err != nil {
				t.Fatalf("ParseConfig: %v", err)
			}
			if diff := cmp.Diff(summary(cfg.Thresholds), tc.want); diff != "" {
				t.Errorf("thresholds (-got +want):\n%s", diff)
			}
		})
	}
}

func TestParseConfigScalars(t *testing.T) {
	zero := time.Duration(0)
	cfg, err := ParseConfig(Input{EvictionMaxPodGracePeriod: -1, KernelMemcgNotification: true,
		KubeReserved: map[string]string{"memory": "1Gi"}, SystemReserved: map[string]string{"cpu": "500m"}})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.PressureTransitionPeriod != 5*time.Minute {
		t.Errorf("unset transition period = %v, want 5m", cfg.PressureTransitionPeriod)
	}
	if cfg.MaxPodGracePeriodSeconds != -1 || !cfg.KernelMemcgNotification {
		t.Errorf("negative max pod grace period is accepted as is: got %d %v", cfg.MaxPodGracePeriodSeconds,
			cfg.KernelMemcgNotification)
	}
	if diff := cmp.Diff(cfg.EnforceNodeAllocatable, []string{"pods"}); diff != "" {
		t.Errorf("default enforceNodeAllocatable (-got +want):\n%s", diff)
	}
	if got := cfg.KubeReserved["memory"]; got.Cmp(resource.MustParse("1Gi")) != 0 {
		t.Errorf("kubeReserved memory = %v", got.String())
	}
	cfg, err = ParseConfig(Input{EvictionPressureTransitionPeriod: &zero})
	if err != nil || cfg.PressureTransitionPeriod != 0 {
		t.Errorf("transition period set to 0 (flag) = %v, %v; want 0", cfg.PressureTransitionPeriod, err)
	}
}

func TestParseConfigErrors(t *testing.T) {
	tests := []struct {
		name string
		in   Input
		want string // full error text
		is   error
	}{
		{"P4 percentage above 100%", set(map[string]string{"memory.available": "150%"}),
			`evictionHard["memory.available"]: eviction percentage threshold memory.available must be <= 100%: 150%`, ErrInvalidValue},
		{"P4 negative percentage", set(map[string]string{"memory.available": "-5%"}),
			`evictionHard["memory.available"]: eviction percentage threshold memory.available must be >= 0%: -5%`, ErrInvalidValue},
		{"P5 zero quantity", set(map[string]string{"memory.available": "0"}),
			`evictionHard["memory.available"]: eviction threshold memory.available must be positive: 0`, ErrInvalidValue},
		{"P5 negative quantity", set(map[string]string{"memory.available": "-1Gi"}),
			`evictionHard["memory.available"]: eviction threshold memory.available must be positive: -1Gi`, ErrInvalidValue},
		{"P6 unknown signal", set(map[string]string{"memory.free": "1Gi"}),
			`evictionHard["memory.free"]: unsupported eviction signal memory.free`, ErrUnsupportedSignal},
		{"P6 swap.available is not a mainline signal", set(map[string]string{"swap.available": "1Gi"}),
			`evictionHard["swap.available"]: unsupported eviction signal swap.available`, ErrUnsupportedSignal},
		{"P7 soft threshold without grace period",
			Input{EvictionHardSet: true, EvictionSoft: map[string]string{"memory.available": "1.5Gi"}},
			`evictionSoftGracePeriod["memory.available"]: grace period must be specified for the soft eviction threshold memory.available`,
			ErrMissingGracePeriod},
		{"P9 negative grace period",
			Input{EvictionHardSet: true, EvictionSoft: map[string]string{"memory.available": "1Gi"},
				EvictionSoftGracePeriod: map[string]string{"memory.available": "-1s"}},
			`evictionSoftGracePeriod["memory.available"]: invalid eviction grace period specified: -1s, must be a positive value`,
			ErrInvalidValue},
		{"grace period for an unknown signal is an error even without soft threshold",
			Input{EvictionHardSet: true, EvictionSoftGracePeriod: map[string]string{"memory.free": "1m"}},
			`evictionSoftGracePeriod["memory.free"]: unsupported eviction signal memory.free`, ErrUnsupportedSignal},
		{"P10 0% min reclaim",
			Input{EvictionHardSet: true, EvictionMinimumReclaim: map[string]string{"memory.available": "0%"}},
			`evictionMinimumReclaim["memory.available"]: eviction percentage minimum reclaim memory.available must be positive: 0%`,
			ErrInvalidValue},
		{"P10 negative min reclaim",
			Input{EvictionHardSet: true, EvictionMinimumReclaim: map[string]string{"memory.available": "-1Mi"}},
			`evictionMinimumReclaim["memory.available"]: value "-1Mi": negative eviction minimum reclaim specified for memory.available`,
			ErrInvalidValue},
		{"unparsable quantity names the value and keeps the apimachinery error",
			set(map[string]string{"memory.available": "1Gb"}),
			`evictionHard["memory.available"]: value "1Gb": quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`,
			resource.ErrFormatWrong},
		{"unparsable percentage keeps the strconv error",
			set(map[string]string{"memory.available": "ten%"}),
			`evictionHard["memory.available"]: value "ten%": strconv.ParseFloat: parsing "ten": invalid syntax`, ErrInvalidValue},
		{"unparsable grace period keeps the time error",
			Input{EvictionHardSet: true, EvictionSoft: map[string]string{"memory.available": "1Gi"},
				EvictionSoftGracePeriod: map[string]string{"memory.available": "90"}},
			`evictionSoftGracePeriod["memory.available"]: time: missing unit in duration "90"`, ErrInvalidValue},
		{"kubeReserved of an unknown resource",
			Input{KubeReserved: map[string]string{"hugepages-2Mi": "1Gi"}},
			`kubeReserved["hugepages-2Mi"]: value "1Gi": cannot reserve "hugepages-2Mi" resource`, ErrInvalidReservation},
		{"negative systemReserved",
			Input{SystemReserved: map[string]string{"memory": "-1Gi"}},
			`systemReserved["memory"]: resource quantity for "memory" cannot be negative: -1Gi`, ErrInvalidReservation},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseConfig(tc.in)
			if err == nil {
				t.Fatalf("ParseConfig succeeded, want error %q", tc.want)
			}
			if diff := cmp.Diff(err.Error(), tc.want); diff != "" {
				t.Errorf("error (-got +want):\n%s", diff)
			}
			if !errors.Is(err, tc.is) {
				t.Errorf("errors.Is(%v, %v) = false", err, tc.is)
			}
			var se *SettingError
			if !errors.As(err, &se) {
				t.Errorf("error %v is not a *SettingError", err)
			}
		})
	}
}

func TestParseConfigReportsEveryErrorInOrder(t *testing.T) {
	_, err := ParseConfig(Input{
		EvictionHard:           map[string]string{"nodefs.available": "200%", "memory.available": "0", "a": "1"},
		EvictionHardSet:        true,
		EvictionSoft:           map[string]string{"pid.available": "100"},
		EvictionMinimumReclaim: map[string]string{"memory.available": "-1"},
	})
	got := strings.Split(err.Error(), "\n")
	want := []string{
		`evictionHard["a"]: unsupported eviction signal a`,
		`evictionHard["memory.available"]: eviction threshold memory.available must be positive: 0`,
		`evictionHard["nodefs.available"]: eviction percentage threshold nodefs.available must be <= 100%: 200%`,
		`evictionMinimumReclaim["memory.available"]: value "-1": negative eviction minimum reclaim specified for memory.available`,
		`evictionSoftGracePeriod["pid.available"]: grace period must be specified for the soft eviction threshold pid.available`,
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("errors (-got +want):\n%s", diff)
	}
}

func TestPercentageIsFloat32(t *testing.T) {
	// P2: 10% is float32(0.1) = 0.100000001490116..., resolved on 100Gi to 10737418400.
	th, ok, err := ParseThresholdStatement("nodefs.available", "10%")
	if err != nil || !ok {
		t.Fatalf("parse: %v %v", ok, err)
	}
	if th.Value.Percentage != float32(0.1) {
		t.Errorf("percentage = %v, want float32(0.1)", th.Value.Percentage)
	}
	for _, c := range []struct {
		val      string
		capacity int64
		want     int64
	}{
		{"10%", 100 << 30, 10737418400},
		{"10%", 10 << 30, 1073741840},
		{"15%", 100 << 30, 16106128000},
		{"5%", 1000000, 50000},
	} {
		th, _, _ := ParseThresholdStatement("nodefs.available", c.val)
		if got := th.Value.Resolve(c.capacity); got != c.want {
			t.Errorf("%s of %d = %d, want %d", c.val, c.capacity, got, c.want)
		}
	}
}

func TestSortThresholdsIsTotal(t *testing.T) {
	q := func(s string) *resource.Quantity { v := resource.MustParse(s); return &v }
	ts := []Threshold{
		{Signal: signal.NodeFsAvailable, Operator: LessThan, Value: Value{Percentage: 0.1}, GracePeriod: time.Minute},
		{Signal: signal.NodeFsAvailable, Operator: LessThan, Value: Value{Percentage: 0.1}},
		{Signal: signal.MemoryAvailable, Operator: LessThan, Value: Value{Quantity: q("1Gi")}},
		{Signal: signal.MemoryAvailable, Operator: LessThan, Value: Value{Percentage: 0.01}},
		{Signal: signal.MemoryAvailable, Operator: LessThan, Value: Value{Quantity: q("100Mi")}},
	}
	SortThresholds(ts)
	want := []string{"memory.available<100Mi", "memory.available<1Gi", "memory.available<1%",
		"nodefs.available<10%", "nodefs.available<10% grace=1m0s"}
	if diff := cmp.Diff(summary(ts), want); diff != "" {
		t.Errorf("order (-got +want):\n%s", diff)
	}
}
