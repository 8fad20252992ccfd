package threshold

import (
	"errors"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
)

const (
	mib = int64(1) << 20
	gib = int64(1) << 30
)

func mustConfig(t *testing.T, in Input) Config {
	t.Helper()
	cfg, err := ParseConfig(in)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestAllocatableDocsExample(t *testing.T) {
	// A1: the "Reserve Compute Resources" docs example with the kubelet's exact arithmetic.
	cfg := mustConfig(t, Input{
		EvictionHard:    map[string]string{"memory.available": "500Mi", "nodefs.available": "10%"},
		EvictionHardSet: true,
		KubeReserved:    map[string]string{"cpu": "1", "memory": "2Gi", "ephemeral-storage": "1Gi"},
		SystemReserved:  map[string]string{"cpu": "500m", "memory": "1Gi", "ephemeral-storage": "1Gi"},
	})
	got, err := Allocatable(map[string]int64{"memory": 32 * gib, "cpu": 16000, "ephemeral-storage": 100 * gib}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := NodeAllocatable{PodsEnforced: true, Resources: []ResourceAllocation{
		{Resource: "cpu", Capacity: 16000, KubeReserved: 1000, SystemReserved: 500, Allocatable: 14500, PodsCgroupLimit: 14500},
		{Resource: "ephemeral-storage", Capacity: 100 * gib, KubeReserved: gib, SystemReserved: gib,
			HardEviction: 10737418400, Allocatable: 94489280352, PodsCgroupLimit: 98 * gib},
		{Resource: "memory", Capacity: 32 * gib, KubeReserved: 2 * gib, SystemReserved: gib, HardEviction: 500 * mib,
			Allocatable: 29196 * mib, PodsCgroupLimit: 29696 * mib},
	}}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("allocatable (-got +want):\n%s", diff)
	}
	if m, _ := got.Get("memory"); m.Allocatable != 30614224896 || m.Format(m.Allocatable) != "29196Mi" {
		t.Errorf("memory allocatable = %d (%s), want 30614224896 (29196Mi)", m.Allocatable, m.Format(m.Allocatable))
	}
	if c, _ := got.Get("cpu"); c.Format(c.Allocatable) != "14500m" {
		t.Errorf("cpu allocatable prints %q, want 14500m", c.Format(c.Allocatable))
	}
}

func TestAllocatableMemory(t *testing.T) {
	tests := []struct {
		name          string
		in            Input
		capacity      map[string]int64
		wantAlloc     int64
		wantPodsLimit int64
	}{
		{"A2 kube-reserved and hard eviction are subtracted",
			Input{EvictionHard: map[string]string{"memory.available": "100Mi"}, EvictionHardSet: true,
				KubeReserved: map[string]string{"memory": "2662Mi"}},
			map[string]int64{"memory": 16384 * mib}, 13622 * mib, 13722 * mib},
		{"A2 experimental-allocatable-ignore-eviction reserves nothing for eviction",
			Input{EvictionHard: map[string]string{"memory.available": "100Mi"}, EvictionHardSet: true,
				KubeReserved: map[string]string{"memory": "2662Mi"}, ExperimentalAllocatableIgnoreEviction: true},
			map[string]int64{"memory": 16384 * mib}, 13722 * mib, 13722 * mib},
		{"A2 a soft memory threshold reserves nothing, even with grace 0s",
			Input{EvictionHard: map[string]string{"memory.available": "100Mi"}, EvictionHardSet: true,
				EvictionSoft: map[string]string{"memory.available": "1Gi"}, EvictionSoftGracePeriod: map[string]string{"memory.available": "0s"},
				KubeReserved: map[string]string{"memory": "2662Mi"}},
			map[string]int64{"memory": 16384 * mib}, 13622 * mib, 13722 * mib},
		{"A3 hugepages are subtracted from allocatable memory but not from the pods cgroup",
			Input{EvictionHard: map[string]string{"memory.available": "100Mi"}, EvictionHardSet: true},
			map[string]int64{"memory": 16 * gib, "hugepages-2Mi": gib}, 15260 * mib, 16 * gib},
		{"without pods enforcement the pods cgroup limit is capacity",
			Input{EvictionHard: map[string]string{"memory.available": "100Mi"}, EvictionHardSet: true,
				KubeReserved: map[string]string{"memory": "1Gi"}, EnforceNodeAllocatableSet: true},
			map[string]int64{"memory": 16 * gib}, 16*gib - gib - 100*mib, 16 * gib},
		{"allocatable is floored at zero",
			Input{EvictionHard: map[string]string{"memory.available": "100Mi"}, EvictionHardSet: true},
			map[string]int64{"memory": 1 * gib, "hugepages-1Gi": 2 * gib}, 0, gib},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Allocatable(tc.capacity, mustConfig(t, tc.in))
			if err != nil {
				t.Fatal(err)
			}
			m, _ := got.Get("memory")
			if m.Allocatable != tc.wantAlloc || m.PodsCgroupLimit != tc.wantPodsLimit {
				t.Errorf("memory allocatable %d (%s), pods limit %d (%s); want %d (%s), %d (%s)",
					m.Allocatable, m.Format(m.Allocatable), m.PodsCgroupLimit, m.Format(m.PodsCgroupLimit),
					tc.wantAlloc, m.Format(tc.wantAlloc), tc.wantPodsLimit, m.Format(tc.wantPodsLimit))
			}
		})
	}
}

func TestAllocatableReservationAboveCapacity(t *testing.T) {
	cfg := mustConfig(t, Input{EvictionHard: map[string]string{"memory.available": "100Mi"}, EvictionHardSet: true,
		KubeReserved: map[string]string{"memory": "2Gi"}})
	got, err := Allocatable(map[string]int64{"memory": 2 * gib}, cfg)
	want := `invalid Node Allocatable configuration. Resource "memory" has a reservation of 2148Mi but capacity of 2Gi. Expected capacity >= reservation.`
	if err == nil || err.Error() != want || !errors.Is(err, ErrInvalidAllocatable) {
		t.Errorf("err = %v, want %q", err, want)
	}
	if m, _ := got.Get("memory"); m.Allocatable != 0 {
		t.Errorf("allocatable = %d, want 0 alongside the error", m.Allocatable)
	}
}

// TestHugeQuantitiesSaturateInsteadOfWrapping: quantities beyond int64 (1e30, or a sum of values near
// the int64 limit) count as the largest int64, never as 0 or a wrapped negative number, so that a
// reservation the kubelet refuses is refused here too.
func TestHugeQuantitiesSaturateInsteadOfWrapping(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   Input
	}{
		{"kubeReserved 1e30", Input{KubeReserved: map[string]string{"memory": "1e30"}}},
		{"kubeReserved 99999999Ei plus the default hard threshold", Input{KubeReserved: map[string]string{"memory": "99999999Ei"}}},
		{"kubeReserved and systemReserved near the int64 limit", Input{KubeReserved: map[string]string{"memory": "5Ei"},
			SystemReserved: map[string]string{"memory": "5Ei"}}},
		{"hard threshold 1e30", Input{EvictionHard: map[string]string{"memory.available": "1e30"}, EvictionHardSet: true}},
		{"cpu kubeReserved 99999999Ei", Input{KubeReserved: map[string]string{"cpu": "99999999Ei"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := mustConfig(t, tc.in)
			got, err := Allocatable(map[string]int64{"memory": 16 * gib, "cpu": 4000}, cfg)
			if !errors.Is(err, ErrInvalidAllocatable) {
				t.Errorf("err = %v, want the kubelet's refusal (reservation above capacity)", err)
			}
			for _, r := range got.Resources {
				if r.Allocatable < 0 || r.PodsCgroupLimit < 0 || r.KubeReserved < 0 || r.HardEviction < 0 {
					t.Errorf("%s: negative amount in %+v", r.Resource, r)
				}
			}
		})
	}
	if v := (Value{Quantity: ptrQuantity(t, "1e30")}).Resolve(0); v != math.MaxInt64 {
		t.Errorf("1e30 resolves to %d, want %d", v, int64(math.MaxInt64))
	}
}

func ptrQuantity(t *testing.T, s string) *resource.Quantity {
	t.Helper()
	q, err := resource.ParseQuantity(s)
	if err != nil {
		t.Fatal(err)
	}
	return &q
}
