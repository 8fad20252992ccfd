package explain

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kube-pressure/pressure/internal/rank"
	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/threshold"
)

// scratchPod uses used bytes of an emptyDir "scratch" limited to 1Gi, and 100Mi of memory.
func scratchPod(ns, name string, used int64) rank.Candidate {
	return rank.Candidate{UID: "uid-" + name, Namespace: ns, Name: name, QOSClass: rank.QOSBestEffort,
		Volumes: []rank.Volume{{Name: "scratch", Kind: rank.VolumeEmptyDir, SizeLimit: &rank.Amount{Value: gi}}},
		Stats: &signal.PodStats{UID: "uid-" + name, MemoryWorkingSet: u64(100 * mi), Time: t0,
			Volumes: []signal.VolumeStats{{Name: "scratch", UsedBytes: u64(used)}}}}
}

func localInput(t *testing.T, available int64, cands ...rank.Candidate) Input {
	t.Helper()
	return Input{Node: "n", Now: t0, Config: parse(t, threshold.Input{EvictionHardSet: true,
		EvictionHard: map[string]string{"memory.available": "100Mi"}}), Candidates: cands,
		Snapshot: signal.Snapshot{Observations: map[signal.Signal]signal.Observation{
			signal.MemoryAvailable: {Available: available, Capacity: 16 * gi, Time: t0}}}}
}

type placed struct{ Pod, Path, DecidedBy string }

func placesOf(k Kubelet) []placed {
	var out []placed
	for _, v := range k.EvictionOrder {
		out = append(out, placed{v.Pod, v.Path, v.DecidedBy})
	}
	return out
}

func TestLocalStorageGroupComesFirstInAStableOrder(t *testing.T) {
	over := []rank.Candidate{scratchPod("b", "z", gi+1), scratchPod("a", "y", 2*gi), scratchPod("a", "x", 3*gi)}
	under := scratchPod("a", "w", gi) // exactly at the limit: not over it
	under.Stats.MemoryWorkingSet = u64(4 * gi)
	for _, tc := range []struct {
		name      string
		available int64
		want      []placed
		notes     []string
	}{
		{"no threshold met: the group alone", 8 * gi,
			[]placed{{"a/x", "local-storage", "local storage"}, {"a/y", "local-storage", "local storage"},
				{"b/z", "local-storage", ""}},
			[]string{"no threshold is met: after the local-storage evictions the kubelet evicts nothing",
				"3 pods are over a local ephemeral-storage limit: the kubelet evicts all of them at its next synchronize"}},
		{"threshold met: the group, then the ranking of the others", 50 * mi,
			[]placed{{"a/x", "local-storage", "local storage"}, {"a/y", "local-storage", "local storage"},
				{"b/z", "local-storage", "local storage"}, {"a/w", "pressure", ""}},
			[]string{"3 pods are over a local ephemeral-storage limit",
				"of the ranking, only the first victim is certain: after the local-storage evictions"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, order := range [][]rank.Candidate{{over[0], over[1], over[2], under}, {under, over[2], over[0], over[1]}} {
				r := Build(localInput(t, tc.available, order...))
				if diff := cmp.Diff(placesOf(r.Kubelet), tc.want); diff != "" {
					t.Errorf("order (-got +want):\n%s", diff)
				}
				for _, n := range tc.notes {
					if !hasPrefixIn(r.Kubelet.Notes, n) {
						t.Errorf("notes %q lack %q", r.Kubelet.Notes, n)
					}
				}
			}
		})
	}
}

func TestLocalStorageVictimSaysWhichLimitAndWhy(t *testing.T) {
	app := rank.Container{Name: "app", Kind: rank.ContainerRegular, EphemeralStorageLimit: &rank.Amount{Value: 500 * mi}}
	logs := rank.Candidate{UID: "uid-logs", Namespace: "default", Name: "logs", QOSClass: rank.QOSBurstable,
		Containers:            []rank.Container{app, {Name: "side", Kind: rank.ContainerRegular, EphemeralStorageLimit: &rank.Amount{Value: 2 * gi}}},
		EphemeralStorageLimit: &rank.Amount{Value: 2548 * mi},
		Stats: &signal.PodStats{UID: "uid-logs", Time: t0, EphemeralStorageUsed: u64(560 * mi), MemoryWorkingSet: u64(mi),
			Containers: []signal.ContainerStats{{Name: "app", LogsUsed: u64(100 * mi), RootfsUsed: u64(450 * mi)}}}}
	r := Build(localInput(t, 50*mi, logs, scratchPod("default", "other", 0)))
	v := r.Kubelet.EvictionOrder[0]
	want := &LocalStorageLimit{Check: CheckContainer, EvictionSignal: "ephemeralcontainerfs.limit", Name: "app",
		Used: "576716800", Limit: "524288000"}
	if diff := cmp.Diff(v.LocalStorage, want, cmpopts.IgnoreUnexported(LocalStorageLimit{})); diff != "" {
		t.Errorf("limit (-got +want):\n%s", diff)
	}
	if v.Message != `Container app exceeded its local ephemeral storage limit "500Mi". ` || v.GracePeriodSeconds != 1 ||
		v.Annotations != nil || v.Usage != "" {
		t.Errorf("victim %+v, want the kubelet's container message, grace 1s, no annotations, no ranking values", v)
	}
	if want := "default/logs exceeds its container app ephemeral-storage limit 500Mi by 50Mi (uses 550Mi): the kubelet " +
		"evicts pods over a local-storage limit before it acts on any threshold"; !strings.HasPrefix(v.Why, want) {
		t.Errorf("why = %q, want it to start with %q", v.Why, want)
	}
	var buf bytes.Buffer
	if err := Text(&buf, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"local storage:        1 pod over a local ephemeral-storage limit: evicted first, at the next synchronize",
		"1  default/logs  Burstable  0         container app ephemeral-storage limit  550Mi  500Mi  50Mi     0s",
		"Then the threshold ranking of the other pods:",
		`default/logs: "Container app exceeded its local ephemeral storage limit \"500Mi\". "`,
		"Then first by the ranking: default/other, grace period 1s.",
	} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, buf.String())
		}
	}
}

func TestCriticalPodOverItsLimitIsRefusedAndRanked(t *testing.T) {
	static := scratchPod("kube-system", "cache", 2*gi)
	static.Critical, static.CriticalReason = true, "static pod"
	for _, available := range []int64{8 * gi, 50 * mi} {
		r := Build(localInput(t, available, static))
		want := "kube-system/cache exceeds its emptyDir \"scratch\" sizeLimit 1Gi by 1Gi (uses 2Gi), but it is critical " +
			"(static pod): the kubelet refuses to evict it at every synchronize"
		if !hasPrefixIn(r.Kubelet.Notes, want) {
			t.Errorf("available %d: notes %q lack %q", available, r.Kubelet.Notes, want)
		}
		for _, v := range r.Kubelet.EvictionOrder {
			if v.Path != PathPressure || !v.Critical || v.LocalStorage == nil {
				t.Errorf("available %d: %+v, want only the ranked critical pod with its limit", available, v)
			}
		}
	}
}

func TestLocalStorageIsolationOffEvictsNoPodForItsLimit(t *testing.T) {
	in := localInput(t, 8*gi, scratchPod("default", "x", 2*gi))
	in.DisableLocalStorageCapacityIsolation = true
	r := Build(in)
	if len(r.Kubelet.EvictionOrder) != 0 || r.Kubelet.LocalStorageCapacityIsolation {
		t.Errorf("kubelet %+v, want no eviction and isolation off", r.Kubelet)
	}
	want := []string{"no threshold is met: the kubelet would evict nothing",
		"localStorageCapacityIsolation is false: the kubelet enforces no emptyDir sizeLimit and no ephemeral-storage limit"}
	if diff := cmp.Diff(r.Kubelet.Notes, want); diff != "" {
		t.Errorf("notes (-got +want):\n%s", diff)
	}
}

func hasPrefixIn(lines []string, prefix string) bool {
	for _, l := range lines {
		if strings.HasPrefix(l, prefix) {
			return true
		}
	}
	return false
}

func TestFractionalLimitIsShownAsTheKubeletPrintsIt(t *testing.T) {
	pod := scratchPod("default", "tiny", 2)
	pod.Volumes[0].SizeLimit = &rank.Amount{Value: 2, Fraction: "1500m"} // resource.MustParse("1500m")
	r := Build(localInput(t, 8*gi, pod))
	if len(r.Kubelet.EvictionOrder) != 1 {
		t.Fatalf("order %+v, want the pod 0.5 byte over its sizeLimit", r.Kubelet.EvictionOrder)
	}
	v := r.Kubelet.EvictionOrder[0]
	if l := v.LocalStorage; l.Limit != "1500m" || l.Used != "2" {
		t.Errorf("limit %+v, want used 2 and limit 1500m", l)
	}
	var buf bytes.Buffer
	if err := Text(&buf, r); err != nil {
		t.Fatal(err)
	}
	if want := `emptyDir "scratch" sizeLimit  2B     1500m  -        0s`; !strings.Contains(buf.String(), want) {
		t.Errorf("text lacks %q:\n%s", want, buf.String())
	}
}
