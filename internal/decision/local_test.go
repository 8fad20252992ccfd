package decision

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kube-pressure/pressure/internal/rank"
	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/threshold"
)

func localStep(t *testing.T, c rank.Candidate, layout signal.FilesystemLayout) Decision {
	t.Helper()
	s := memObs(8*gi, 16*gi, at(0)) // no pressure at all
	s.Filesystems = layout
	_, d := Step(State{}, Input{Now: at(0), Snapshot: s, Candidates: []rank.Candidate{c},
		Config: hard(t, "memory.available", "100Mi")})
	return d
}

func ephemeralContainer(name string, limit int64, logs, rootfs int64) (rank.Container, signal.ContainerStats) {
	return rank.Container{Name: name, Kind: rank.ContainerRegular, EphemeralStorageLimit: &rank.Amount{Value: limit}},
		signal.ContainerStats{Name: name, LogsUsed: u64(logs), RootfsUsed: u64(rootfs)}
}

// overEmptyDir is a pod using 2Mi of an emptyDir limited to 1Mi.
func overEmptyDir(name string) rank.Candidate {
	return rank.Candidate{UID: name, Namespace: "default", Name: name,
		Volumes: []rank.Volume{{Name: "v", Kind: rank.VolumeEmptyDir, SizeLimit: &rank.Amount{Value: mi}}},
		Stats:   &signal.PodStats{Volumes: []signal.VolumeStats{{Name: "v", UsedBytes: u64(2 * mi)}}}}
}

func TestLocalStorageEviction(t *testing.T) {
	emptyDir := func(used int64) rank.Candidate {
		return rank.Candidate{UID: "e", Namespace: "default", Name: "e",
			Volumes: []rank.Volume{{Name: "scratch", Kind: rank.VolumeEmptyDir, SizeLimit: &rank.Amount{Value: gi}}},
			Stats:   &signal.PodStats{Volumes: []signal.VolumeStats{{Name: "scratch", UsedBytes: u64(used)}}}}
	}
	app, appStats := ephemeralContainer("app", 500*mi, 100*mi, 450*mi)
	side, sideStats := ephemeralContainer("side", 2*gi, 10*mi, 0)
	twoContainers := rank.Candidate{UID: "m7", Namespace: "default", Name: "m7",
		EphemeralStorageLimit: &rank.Amount{Value: 2548 * mi},
		Containers:            []rank.Container{app, side},
		Stats: &signal.PodStats{EphemeralStorageUsed: u64(560 * mi),
			Containers: []signal.ContainerStats{appStats, sideStats}}}
	single, singleStats := ephemeralContainer("only", 500*mi, 50*mi, 500*mi)
	oneContainer := rank.Candidate{UID: "p", Namespace: "default", Name: "p",
		EphemeralStorageLimit: &rank.Amount{Value: 500 * mi}, Containers: []rank.Container{single},
		Stats: &signal.PodStats{EphemeralStorageUsed: u64(550 * mi), Containers: []signal.ContainerStats{singleStats}}}
	fraction := emptyDir(2)
	fraction.Volumes[0].SizeLimit = &rank.Amount{Value: 2, Fraction: "1500m"} // resource.MustParse("1500m")
	critical := emptyDir(gi + 1)
	critical.Critical, critical.CriticalReason = true, "mirror pod"

	tests := []struct {
		name      string
		pod       rank.Candidate
		layout    signal.FilesystemLayout
		wantMsg   string
		wantLabel string
		wantLimit StorageLimit
	}{
		{"M6 emptyDir one byte over its sizeLimit is evicted", emptyDir(gi + 1), signal.FilesystemLayout{},
			`Usage of EmptyDir volume "scratch" exceeds the limit "1Gi". `, LabelEmptyDirLimit,
			StorageLimit{Name: "scratch", Used: gi + 1, Limit: rank.Amount{Value: gi}}},
		{"M6 emptyDir exactly at its sizeLimit is not evicted", emptyDir(gi), signal.FilesystemLayout{}, "", "", StorageLimit{}},
		{"M7 container over its limit counting rootfs without a dedicated imagefs", twoContainers, signal.FilesystemLayout{},
			`Container app exceeded its local ephemeral storage limit "500Mi". `, LabelEphemeralContainerLim,
			StorageLimit{Name: "app", Used: 550 * mi, Limit: rank.Amount{Value: 500 * mi}}},
		{"M7 with a dedicated imagefs only logs count and the container is not evicted", twoContainers,
			signal.FilesystemLayout{DedicatedImageFs: true}, "", "", StorageLimit{}},
		{"M7 single container: the pod-level limit check fires first", oneContainer, signal.FilesystemLayout{},
			"Pod ephemeral local storage usage exceeds the total limit of containers 500Mi. ", LabelEphemeralPodLimit,
			StorageLimit{Used: 550 * mi, Limit: rank.Amount{Value: 500 * mi}}},
		{"a fractional sizeLimit compares exactly: 2 bytes exceed 1500m", fraction, signal.FilesystemLayout{},
			`Usage of EmptyDir volume "scratch" exceeds the limit "1500m". `, LabelEmptyDirLimit,
			StorageLimit{Name: "scratch", Used: 2, Limit: rank.Amount{Value: 2, Fraction: "1500m"}}},
		{"critical pod over its emptyDir limit is not evicted", critical, signal.FilesystemLayout{}, "", "", StorageLimit{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := localStep(t, tc.pod, tc.layout)
			if tc.wantMsg == "" {
				if len(d.Evictions) != 0 {
					t.Errorf("evictions = %+v, want none", d.Evictions)
				}
				return
			}
			if len(d.Evictions) != 1 {
				t.Fatalf("evictions = %v, want one\n%s", evictedNames(d), d.Trace)
			}
			want := Eviction{UID: tc.pod.UID, Namespace: "default", Name: tc.pod.Name, Path: PathLocalStorage,
				Threshold: -1, MetricLabel: tc.wantLabel, Message: tc.wantMsg, Grace: Grace{1, 1, 10}, Limit: &tc.wantLimit}
			if diff := cmp.Diff(d.Evictions[0], want); diff != "" {
				t.Errorf("eviction (-got +want):\n%s", diff)
			}
			if len(d.Conditions) != 0 {
				t.Errorf("conditions = %v, want none", d.Conditions)
			}
		})
	}
}

func TestLocalStorageEvictionPreemptsPressureAndMayEvictSeveral(t *testing.T) {
	pods := append(r1Pods(), overEmptyDir("l1"), overEmptyDir("l2"))
	_, d := Step(State{}, Input{Now: at(0), Snapshot: memObs(50*mi, 16*gi, at(0)), Candidates: pods,
		Config: hard(t, "memory.available", "100Mi")})
	if diff := cmp.Diff(evictedNames(d), []string{"l1", "l2"}); diff != "" {
		t.Errorf("evicted (-got +want):\n%s", diff)
	}
	if d.NodeEvent != nil {
		t.Errorf("node event = %+v, want none: pressure eviction is skipped", d.NodeEvent)
	}
	_, d = Step(State{}, Input{Now: at(0), Snapshot: memObs(50*mi, 16*gi, at(0)), Candidates: pods,
		Config: hard(t, "memory.available", "100Mi"), DisableLocalStorageCapacityIsolation: true})
	if diff := cmp.Diff(evictedNames(d), []string{"a"}); diff != "" {
		t.Errorf("with isolation disabled evicted (-got +want):\n%s", diff)
	}
}

func TestM8Admission(t *testing.T) {
	guaranteed := memPod("g", gi, 0)
	guaranteed.QOSClass = rank.QOSGuaranteed
	burstable := memPod("b", mi, 0)
	bestEffort := memPod("be", 0, 0)
	tolerating := bestEffort
	tolerating.ToleratesMemoryPressure = true
	critical := bestEffort
	critical.Critical, critical.Priority = true, 2000000000
	mem := []signal.NodeCondition{signal.MemoryPressure}
	disk := []signal.NodeCondition{signal.DiskPressure}
	memPID := []signal.NodeCondition{signal.MemoryPressure, signal.PIDPressure}
	tests := []struct {
		name  string
		conds []signal.NodeCondition
		pod   rank.Candidate
		want  bool
		msg   string
	}{
		{"no condition admits everything", nil, bestEffort, true, ""},
		{"M8 DiskPressure rejects a guaranteed pod", disk, guaranteed, false, "The node had condition: [DiskPressure]. "},
		{"M8 MemoryPressure admits a burstable pod", mem, burstable, true, ""},
		{"M8 MemoryPressure rejects a best-effort pod", mem, bestEffort, false, "The node had condition: [MemoryPressure]. "},
		{"M8 MemoryPressure admits a best-effort pod tolerating the taint", mem, tolerating, true, ""},
		{"M8 MemoryPressure with PIDPressure rejects even the tolerating pod", memPID, tolerating, false,
			"The node had condition: [MemoryPressure PIDPressure]. "},
		{"M8 a critical pod is admitted under any pressure", memPID, critical, true, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ok, msg := Admit(tc.conds, tc.pod)
			if ok != tc.want || msg != tc.msg {
				t.Errorf("Admit = %v %q, want %v %q", ok, msg, tc.want, tc.msg)
			}
		})
	}
	if got, want := RejectedPrefix+"The node had condition: [DiskPressure]. ", "Pod was rejected: The node had condition: [DiskPressure]. "; got != want {
		t.Errorf("status message = %q, want %q", got, want)
	}
}

func TestPredictOrderWalksTheWholeRanking(t *testing.T) {
	static := memPod("static", 0, 4*gi)
	static.Critical, static.CriticalReason = true, "static pod"
	pods := append(r1Pods(), static)
	cfg := config(t, threshold.Input{EvictionHard: map[string]string{}, EvictionHardSet: true,
		EvictionSoft:            map[string]string{"memory.available": "1Gi"},
		EvictionSoftGracePeriod: map[string]string{"memory.available": "90s"}})
	in := Input{Now: at(0), Snapshot: memObs(500*mi, 16*gi, at(0)), Candidates: pods, Config: cfg}
	if p := PredictOrder(State{}, in, PredictOptions{}); len(p.Order) != 0 {
		t.Errorf("within grace: predicted %d entries, want none", len(p.Order))
	}
	p := PredictOrder(State{}, in, PredictOptions{IgnoreGrace: true})
	type row struct {
		Name     string
		Critical bool
		By       rank.Key
		Override int64
	}
	var got []row
	for _, e := range p.Order {
		got = append(got, row{e.Eviction.Name, e.Critical, e.Eviction.DecidedBy, e.Eviction.Grace.Override})
	}
	want := []row{{"static", true, rank.KeyUsageAboveRequest, 0}, {"a", false, rank.KeyUsageAboveRequest, 0},
		{"b", false, rank.KeyExceedsRequest, 0}, {"c", false, "", 0}}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("predicted order (-got +want):\n%s", diff)
	}
}

func TestPredictOrderStartsWithTheLocalStorageGroup(t *testing.T) {
	crit := overEmptyDir("crit")
	crit.Critical, crit.CriticalReason = true, "static pod"
	pods := append([]rank.Candidate{overEmptyDir("l2")}, append(r1Pods(), overEmptyDir("l1"), crit)...)
	names := func(es []Eviction) []string {
		var out []string
		for _, e := range es {
			out = append(out, e.Name)
		}
		return out
	}
	ranked := func(p Prediction) []string {
		var out []string
		for _, e := range p.Order {
			out = append(out, e.Eviction.Name)
		}
		return out
	}
	for _, tc := range []struct {
		name                        string
		available                   int64
		disable                     bool
		wantLocal, wantRanked, refd []string
	}{
		{"no threshold met: the group alone, in input order", 8 * gi, false, []string{"l2", "l1"}, nil, []string{"crit"}},
		{"threshold met: the group, then the ranking of the others", 50 * mi, false, []string{"l2", "l1"},
			[]string{"a", "b", "crit", "c"}, []string{"crit"}},
		{"isolation off: no group, every pod ranked", 50 * mi, true, nil,
			[]string{"a", "b", "crit", "l1", "l2", "c"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := Input{Now: at(0), Snapshot: memObs(tc.available, 16*gi, at(0)), Candidates: pods,
				Config: hard(t, "memory.available", "100Mi"), DisableLocalStorageCapacityIsolation: tc.disable}
			p := PredictOrder(State{}, in, PredictOptions{})
			if diff := cmp.Diff(names(p.LocalStorage), tc.wantLocal); diff != "" {
				t.Errorf("local-storage group (-got +want):\n%s", diff)
			}
			if diff := cmp.Diff(ranked(p), tc.wantRanked); diff != "" {
				t.Errorf("ranking (-got +want):\n%s", diff)
			}
			var refused []string
			for _, r := range p.LocalStorageRefused {
				refused = append(refused, r.Eviction.Name)
				if !r.Critical || r.Eviction.Limit == nil || r.Eviction.MetricLabel != LabelEmptyDirLimit {
					t.Errorf("refused %+v, want critical with its emptyDir limit", r)
				}
			}
			if diff := cmp.Diff(refused, tc.refd); diff != "" {
				t.Errorf("refused (-got +want):\n%s", diff)
			}
		})
	}
}
