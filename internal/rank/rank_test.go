package rank

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kube-pressure/pressure/internal/signal"
)

const (
	mi = 1 << 20
	gi = 1 << 30
)

var u = signal.Uint64

func memPod(name string, request int64, ws uint64, priority int32) Candidate {
	return Candidate{UID: "uid-" + name, Namespace: "default", Name: name, Priority: priority,
		MemoryRequest: request, Stats: &signal.PodStats{UID: "uid-" + name, MemoryWorkingSet: u(ws)}}
}

func names(r Ranking) []string {
	out := make([]string, len(r.Entries))
	for i, e := range r.Entries {
		out[i] = e.Candidate.Name
	}
	return out
}

func keys(r Ranking) []Key {
	out := make([]Key, len(r.Steps))
	for i, s := range r.Steps {
		out[i] = s.Key
	}
	return out
}

func TestRank(t *testing.T) {
	single := signal.FilesystemLayout{}
	dedicated := signal.FilesystemLayout{DedicatedImageFs: true}
	split := signal.FilesystemLayout{DedicatedImageFs: true, SplitContainerFs: true}
	d1 := Candidate{UID: "d1", Namespace: "default", Name: "d1", EphemeralStorageRequest: 5 << 30,
		Volumes: []Volume{{Name: "scratch", Kind: VolumeEmptyDir}},
		Stats: &signal.PodStats{Containers: []signal.ContainerStats{{Name: "c", RootfsUsed: u(1 << 30), LogsUsed: u(100 * mi)}},
			Volumes: []signal.VolumeStats{{Name: "scratch", UsedBytes: u(2 << 30)}}}}
	d2 := Candidate{UID: "d2", Namespace: "default", Name: "d2",
		Stats: &signal.PodStats{Containers: []signal.ContainerStats{{Name: "c", RootfsUsed: u(200 * mi)}}}}
	inodePod := func(name string, inodes uint64, request int64) Candidate {
		return Candidate{UID: name, Namespace: "default", Name: name, EphemeralStorageRequest: request,
			Stats: &signal.PodStats{Containers: []signal.ContainerStats{{Name: "c", RootfsInodes: u(inodes)}}}}
	}
	pidPod := func(name string, procs uint64, priority int32) Candidate {
		return Candidate{UID: name, Namespace: "default", Name: name, Priority: priority,
			Stats: &signal.PodStats{ProcessCount: u(procs)}}
	}
	noStats := Candidate{UID: "n", Namespace: "default", Name: "nostats", Priority: 100}
	tests := []struct {
		name      string
		sig       signal.Signal
		layout    signal.FilesystemLayout
		cands     []Candidate
		wantOrder []string
		wantKeys  []Key
	}{
		{
			name: "R1 burstable pod far above its request is evicted before best-effort, guaranteed last",
			sig:  signal.MemoryAvailable,
			cands: []Candidate{
				memPod("c", 1024*mi, 900*mi, 0), memPod("b", 0, 300*mi, 0), memPod("a", 100*mi, 2048*mi, 0)},
			wantOrder: []string{"a", "b", "c"},
			wantKeys:  []Key{KeyUsageAboveRequest, KeyExceedsRequest},
		},
		{
			name:      "R2 lower priority is evicted first among pods above request regardless of size",
			sig:       signal.MemoryAvailable,
			cands:     []Candidate{memPod("x", 0, 1024*mi, 1000), memPod("y", 0, 10*mi, 0)},
			wantOrder: []string{"y", "x"},
			wantKeys:  []Key{KeyPriority},
		},
		{
			name:      "R3 pod without stats ranks before any pod with stats under memory pressure",
			sig:       signal.MemoryAvailable,
			cands:     []Candidate{memPod("a", 0, 4096*mi, -5), noStats},
			wantOrder: []string{"nostats", "a"},
			wantKeys:  []Key{KeyNoStats},
		},
		{
			name:      "R4 among pods under request the one closest to its request goes first",
			sig:       signal.MemoryAvailable,
			cands:     []Candidate{memPod("u", 500*mi, 100*mi, 0), memPod("g", 1024*mi, 900*mi, 0)},
			wantOrder: []string{"g", "u"},
			wantKeys:  []Key{KeyUsageAboveRequest},
		},
		{
			name:      "R5 pid pressure ranks by priority then process count",
			sig:       signal.PIDAvailable,
			cands:     []Candidate{pidPod("p1", 50, 0), pidPod("p2", 500, 0), pidPod("p3", 5, -10)},
			wantOrder: []string{"p3", "p2", "p1"},
			wantKeys:  []Key{KeyPriority, KeyProcessCount},
		},
		{
			name:      "R5 pid pressure ranks a higher-priority pod without stats after lower priority",
			sig:       signal.PIDAvailable,
			cands:     []Candidate{noStats, pidPod("p1", 50, 0)},
			wantOrder: []string{"p1", "nostats"},
			wantKeys:  []Key{KeyPriority},
		},
		{
			name:      "R6 nodefs single filesystem evicts the pod exceeding its ephemeral request first",
			sig:       signal.NodeFsAvailable,
			layout:    single,
			cands:     []Candidate{d1, d2},
			wantOrder: []string{"d2", "d1"},
			wantKeys:  []Key{KeyExceedsDiskRequest},
		},
		{
			name:      "R6 nodefs with dedicated imagefs ignores rootfs so neither exceeds and d2 scores 0 above d1",
			sig:       signal.NodeFsAvailable,
			layout:    dedicated,
			cands:     []Candidate{d1, d2},
			wantOrder: []string{"d2", "d1"},
			wantKeys:  []Key{KeyDiskUsageAboveRequest},
		},
		{
			name:      "R7 inode ranking subtracts the byte request so the small inode user goes first",
			sig:       signal.NodeFsInodesFree,
			cands:     []Candidate{inodePod("i2", 500000, 1<<30), inodePod("i1", 10000, 0)},
			wantOrder: []string{"i1", "i2"},
			wantKeys:  []Key{KeyDiskUsageAboveRequest},
		},
		{
			name:      "split imagefs ranking measures nothing and falls back to minus request",
			sig:       signal.ImageFsAvailable,
			layout:    split,
			cands:     []Candidate{d2, d1},
			wantOrder: []string{"d2", "d1"},
			wantKeys:  []Key{KeyDiskUsageAboveRequest},
		},
		{
			name:      "pods equal on every kubelet key are ordered by namespace/name",
			sig:       signal.MemoryAvailable,
			cands:     []Candidate{memPod("zz", 0, 10*mi, 0), memPod("aa", 0, 10*mi, 0)},
			wantOrder: []string{"aa", "zz"},
			wantKeys:  []Key{KeyTieName},
		},
		{
			name:      "two pods without stats are ordered by priority under memory pressure",
			sig:       signal.MemoryAvailable,
			cands:     []Candidate{noStats, {UID: "m", Namespace: "default", Name: "m2", Priority: 1}},
			wantOrder: []string{"m2", "nostats"},
			wantKeys:  []Key{KeyPriority},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := Rank(tc.sig, tc.layout, tc.cands)
			if diff := cmp.Diff(names(r), tc.wantOrder); diff != "" {
				t.Errorf("order (-got +want):\n%s", diff)
			}
			if diff := cmp.Diff(keys(r), tc.wantKeys); diff != "" {
				t.Errorf("deciding keys (-got +want):\n%s", diff)
			}
		})
	}
}

func TestRankRecordsComparedValues(t *testing.T) {
	r := Rank(signal.MemoryAvailable, signal.FilesystemLayout{},
		[]Candidate{memPod("b", 0, 300*mi, 0), memPod("a", 100*mi, 2048*mi, 0)})
	got := r.Steps[0]
	want := Step{Key: KeyUsageAboveRequest, Before: "2042626048", After: "314572800"}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("step (-got +want):\n%s", diff)
	}
	if got, want := r.Entries[0].Values.Exceeds, true; got != want {
		t.Errorf("a exceeds = %v, want %v", got, want)
	}
}

func TestAmountPrintsLikeTheKubelet(t *testing.T) {
	tests := []struct {
		a    Amount
		want string
	}{
		{Amount{}, "0"},
		{Amount{Value: 100 * mi}, "100Mi"},
		{Amount{Value: 1610612736}, "1536Mi"},
		{Amount{Value: 1073741840}, "1073741840"},
		{Amount{Value: 1000000000, Format: "DecimalSI"}, "1G"},
	}
	for _, tc := range tests {
		if got := tc.a.String(); got != tc.want {
			t.Errorf("Amount%+v.String() = %q, want %q", tc.a, got, tc.want)
		}
	}
}

func TestAmountOfAFractionKeepsTheKubeletsTextAndComparison(t *testing.T) {
	// The API accepts ephemeral-storage limits such as "1500m" (1.5 bytes); the kubelet prints them as
	// written and compares exactly: 2 bytes exceed 1.5, where the rounded-up Value 2 would not.
	tests := []struct {
		quantity string
		text     string
		value    int64
		exceeded map[int64]bool
	}{
		{"1500m", "1500m", 2, map[int64]bool{1: false, 2: true}},
		{"0.5", "500m", 1, map[int64]bool{0: false, 1: true}},
		{"1Gi", "1Gi", gi, map[int64]bool{gi: false, gi + 1: true}},
		{"500M", "500M", 500000000, map[int64]bool{500000000: false, 500000001: true}},
	}
	for _, tc := range tests {
		a := NewAmount(resource.MustParse(tc.quantity))
		if a.String() != tc.text || a.Value != tc.value {
			t.Errorf("NewAmount(%s) = %+v printing %q, want value %d printing %q", tc.quantity, a, a.String(), tc.value, tc.text)
		}
		for used, want := range tc.exceeded {
			if got := a.ExceededBy(used); got != want {
				t.Errorf("NewAmount(%s).ExceededBy(%d) = %v, want %v", tc.quantity, used, got, want)
			}
		}
	}
}
