package decision

import (
	"strings"
	"testing"

	"github.com/kube-pressure/pressure/internal/rank"
	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/threshold"
)

func TestResolveSemantics(t *testing.T) {
	tests := []struct {
		name, version string
		wantMinor     int
		wantWarning   string // substring; "" = no warning
	}{
		{"a 1.34 patch release resolves to 1.34", "v1.34.4", 34, ""},
		{"a 1.35 release resolves to 1.35", "v1.35.4", 35, ""},
		{"a 1.36 release resolves to 1.36", "v1.36.3", 36, ""},
		{"the pinned 1.37 resolves to 1.37", "v1.37.2", 37, ""},
		{"a vendor suffix is ignored", "v1.37.2-eks-4a1b2c", 37, ""},
		{"a build suffix on the minor is ignored", "1.35+k3s1", 35, ""},
		{"an unknown version warns and uses the pinned 1.37", "", 37, "kubelet version unknown"},
		{"garbage warns and uses the pinned 1.37", "banana", 37, "not a Kubernetes 1.x version"},
		{"an older release warns and uses 1.34", "v1.31.9", 34, "older than 1.34"},
		{"a newer release warns and uses 1.37", "v1.38.0", 37, "newer than 1.37"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := ResolveSemantics(tt.version)
			if s.Minor != tt.wantMinor {
				t.Errorf("ResolveSemantics(%q).Minor = %d, want %d", tt.version, s.Minor, tt.wantMinor)
			}
			if (tt.wantWarning == "") != (s.Warning == "") || !strings.Contains(s.Warning, tt.wantWarning) {
				t.Errorf("ResolveSemantics(%q).Warning = %q, want one containing %q", tt.version, s.Warning, tt.wantWarning)
			}
		})
	}
	if got := (Semantics{}).MinorOrDefault(); got != 37 {
		t.Errorf("zero Semantics = 1.%d, want the pinned 1.37", got)
	}
}

// sidecarOverLimit is a pod whose sidecar (restartable init container) writes 600Mi of logs against a
// 500Mi ephemeral-storage limit, with no pod-level limit reached.
func sidecarOverLimit() rank.Candidate {
	return rank.Candidate{UID: "s", Namespace: "default", Name: "s",
		EphemeralStorageLimit: &rank.Amount{Value: 10 * gi},
		Containers: []rank.Container{
			{Name: "app", Kind: rank.ContainerRegular},
			{Name: "proxy", Kind: rank.ContainerSidecar, EphemeralStorageLimit: &rank.Amount{Value: 500 * mi}}},
		Stats: &signal.PodStats{EphemeralStorageUsed: u64(600 * mi), Containers: []signal.ContainerStats{
			{Name: "app", LogsUsed: u64(0)}, {Name: "proxy", LogsUsed: u64(600 * mi)}}}}
}

// memoryEmptyDirOver is a pod using 2Mi of a Memory emptyDir limited to 1Mi.
func memoryEmptyDirOver() rank.Candidate {
	c := overEmptyDir("m")
	c.Volumes[0].Medium = "Memory"
	return c
}

func semanticsStep(t *testing.T, c rank.Candidate, sem Semantics) Decision {
	t.Helper()
	s := memObs(8*gi, 16*gi, at(0))
	_, d := Step(State{}, Input{Now: at(0), Snapshot: s, Candidates: []rank.Candidate{c},
		Config: hard(t, "memory.available", "100Mi"), Semantics: sem})
	return d
}

func TestSemanticsLocalStorage(t *testing.T) {
	v := func(version string) Semantics { return ResolveSemantics(version) }
	gateOn := ResolveSemantics("v1.37.2")
	gateOn.Gates.InPlacePodVerticalScalingMemoryBackedVolumes = true
	gateOn36 := ResolveSemantics("v1.36.3")
	gateOn36.Gates.InPlacePodVerticalScalingMemoryBackedVolumes = true
	tests := []struct {
		name      string
		pod       rank.Candidate
		sem       Semantics
		wantLabel string // "" = not evicted
	}{
		{"1.37 kubelet evicts a pod whose sidecar exceeds its ephemeral-storage limit", sidecarOverLimit(), v("v1.37.2"),
			LabelEphemeralContainerLim},
		{"1.36 kubelet does not evict a pod whose sidecar exceeds its ephemeral-storage limit", sidecarOverLimit(),
			v("v1.36.3"), ""},
		{"1.34 kubelet does not evict a pod whose sidecar exceeds its ephemeral-storage limit", sidecarOverLimit(),
			v("v1.34.4"), ""},
		{"no version known: a sidecar over its limit is evicted (the pinned 1.37)", sidecarOverLimit(), Semantics{},
			LabelEphemeralContainerLim},
		{"1.37 with InPlacePodVerticalScalingMemoryBackedVolumes does not evict a pod over a memory emptyDir sizeLimit",
			memoryEmptyDirOver(), gateOn, ""},
		{"1.37 with the gate at its default (off) evicts a pod over a memory emptyDir sizeLimit", memoryEmptyDirOver(),
			v("v1.37.2"), LabelEmptyDirLimit},
		{"1.36 ignores the gate and evicts a pod over a memory emptyDir sizeLimit", memoryEmptyDirOver(), gateOn36,
			LabelEmptyDirLimit},
		{"1.37 with the gate still evicts a pod over a disk emptyDir sizeLimit", overEmptyDir("d"), gateOn,
			LabelEmptyDirLimit},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := semanticsStep(t, tt.pod, tt.sem)
			got := ""
			if len(d.Evictions) > 0 {
				got = d.Evictions[0].MetricLabel
			}
			if got != tt.wantLabel {
				t.Errorf("eviction label = %q, want %q (evictions %+v)", got, tt.wantLabel, d.Evictions)
			}
			p := PredictOrder(State{}, Input{Now: at(0), Snapshot: memObs(8*gi, 16*gi, at(0)),
				Candidates: []rank.Candidate{tt.pod}, Config: hard(t, "memory.available", "100Mi"), Semantics: tt.sem},
				PredictOptions{IgnoreGrace: true})
			if (len(p.LocalStorage) > 0) != (tt.wantLabel != "") {
				t.Errorf("PredictOrder local-storage victims = %d, want evicted=%v", len(p.LocalStorage), tt.wantLabel != "")
			}
		})
	}
}

func TestSemanticsSoftGrace(t *testing.T) {
	cfg := config(t, threshold.Input{EvictionHard: map[string]string{}, EvictionHardSet: true,
		EvictionSoft:              map[string]string{"memory.available": "1Gi"},
		EvictionSoftGracePeriod:   map[string]string{"memory.available": "90s"},
		EvictionMaxPodGracePeriod: 60})
	on := func(version string) Semantics {
		s := ResolveSemantics(version)
		s.Gates.AllowOverwriteTerminationGracePeriodSeconds = true
		return s
	}
	tests := []struct {
		name      string
		sem       Semantics
		wantGrace int64
	}{
		{"1.34 with AllowOverwriteTerminationGracePeriodSeconds kills with evictionMaxPodGracePeriod, not the pod's 30s",
			on("v1.34.4"), 60},
		{"1.34 with the gate at its default (off) kills with the pod's shorter 30s", ResolveSemantics("v1.34.4"), 30},
		{"1.35 ignores the gate and kills with the pod's shorter 30s", on("v1.35.4"), 30},
		{"1.37 ignores the gate and kills with the pod's shorter 30s", on("v1.37.2"), 30},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := PredictOrder(State{}, Input{Now: at(0), Snapshot: memObs(500*mi, 16*gi, at(0)),
				Candidates: []rank.Candidate{memPod("a", 0, gi)}, Config: cfg, Semantics: tt.sem},
				PredictOptions{IgnoreGrace: true})
			if len(p.Order) != 1 {
				t.Fatalf("predicted %d victims, want 1", len(p.Order))
			}
			if got := p.Order[0].Eviction.Grace.Override; got != tt.wantGrace {
				t.Errorf("grace override = %d, want %d", got, tt.wantGrace)
			}
		})
	}
}
