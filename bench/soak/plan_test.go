package soak

import (
	"reflect"
	"slices"
	"testing"
	"time"
)

func TestDrawGivesTheSamePlanForTheSameSeedAndEpisodeWhateverRanBefore(t *testing.T) {
	cfg := DrawConfig{Faults: FaultKinds(), FaultEpisode: -1, FaultChance: 0.5, FaultWithin: 40 * time.Second}
	alone := Draw(7, 3, cfg)
	for e := range 3 {
		_ = Draw(7, e, cfg)
	}
	if again := Draw(7, 3, cfg); !reflect.DeepEqual(alone, again) {
		t.Errorf("episode 3 of seed 7 drawn alone %+v, after episodes 0-2 %+v", alone, again)
	}
	if other := Draw(8, 3, cfg); reflect.DeepEqual(alone.Workloads, other.Workloads) && reflect.DeepEqual(alone.Fault, other.Fault) {
		t.Errorf("seeds 7 and 8 drew the same episode 3: %+v", alone)
	}
}

func TestDrawKeepsTheFaultSettingsFromChangingTheWorkloads(t *testing.T) {
	with := Draw(11, 2, DrawConfig{Faults: FaultKinds(), FaultEpisode: 2, FaultWithin: 40 * time.Second})
	without := Draw(11, 2, DrawConfig{FaultEpisode: -1})
	if !reflect.DeepEqual(with.Workloads, without.Workloads) {
		t.Errorf("workloads changed with the fault settings:\n%+v\n%+v", with.Workloads, without.Workloads)
	}
	if with.Fault == nil || without.Fault != nil {
		t.Errorf("faults %+v and %+v, want one and none", with.Fault, without.Fault)
	}
}

func TestDrawShortVersionHasExactlyOneFaultInItsFaultEpisode(t *testing.T) {
	cfg := DrawConfig{Faults: FaultKinds(), FaultEpisode: 1, FaultWithin: 30 * time.Second}
	for seed := range uint64(50) {
		n := 0
		for e := range 3 {
			if p := Draw(seed, e, cfg); p.Fault != nil {
				n++
				if e != 1 {
					t.Errorf("seed %d: fault in episode %d, want only in 1", seed, e)
				}
				if at := time.Duration(p.Fault.At); at < 5*time.Second || at >= 30*time.Second {
					t.Errorf("seed %d: fault at %s, want in [5s, 30s)", seed, at)
				}
			}
		}
		if n != 1 {
			t.Errorf("seed %d: %d faults in 3 episodes, want 1", seed, n)
		}
	}
}

func TestDrawDrawsEveryAllowedFaultKindAndNoOther(t *testing.T) {
	seen := map[FaultKind]int{}
	allowed := []FaultKind{FaultAgentSIGKILL, FaultAPIServerStop}
	for e := range 200 {
		p := Draw(1, e, DrawConfig{Faults: allowed, FaultEpisode: -1, FaultChance: 0.5, FaultWithin: 40 * time.Second})
		if p.Fault == nil {
			continue
		}
		seen[p.Fault.Kind]++
		if !slices.Contains(allowed, p.Fault.Kind) {
			t.Errorf("episode %d drew %s, not allowed", e, p.Fault.Kind)
		}
		if d := time.Duration(p.Fault.For); p.Fault.Kind == FaultAPIServerStop && (d < 10*time.Second || d >= 30*time.Second) {
			t.Errorf("episode %d: API server down for %s, want 10-30 s", e, d)
		}
	}
	for _, k := range allowed {
		if seen[k] < 20 {
			t.Errorf("%s drawn %d times in 200 episodes at chance 0.5, want about 50", k, seen[k])
		}
	}
}

func TestDrawDrawsEveryFaultKindFromAll(t *testing.T) {
	seen := map[FaultKind]bool{}
	for e := range 300 {
		if p := Draw(1, e, DrawConfig{Faults: FaultKinds(), FaultEpisode: -1, FaultChance: 1, FaultWithin: 40 * time.Second}); p.Fault != nil {
			seen[p.Fault.Kind] = true
			if p.Fault.Kind != FaultAPIServerStop && p.Fault.For != 0 {
				t.Errorf("episode %d: %s lasts %s, want no duration", e, p.Fault.Kind, time.Duration(p.Fault.For))
			}
		}
	}
	for _, k := range FaultKinds() {
		if !seen[k] {
			t.Errorf("%s never drawn in 300 episodes with a fault each", k)
		}
	}
}

func TestDrawAlwaysHasTheSteadyPodsOfEveryQOSClassACriticalPodAndAPDB(t *testing.T) {
	for e := range 30 {
		p := Draw(3, e, DrawConfig{FaultEpisode: -1})
		qos := map[string]bool{}
		for _, w := range p.Workloads {
			qos[w.QOS()] = true
		}
		if !qos["Guaranteed"] || !qos["Burstable"] || !qos["BestEffort"] {
			t.Errorf("episode %d: QoS classes %v, want all three", e, qos)
		}
		if p.Critical.Priority != "system-node-critical" || p.PDBReplicas <= p.PDBMinAvailable {
			t.Errorf("episode %d: critical %+v, PDB %d/%d", e, p.Critical, p.PDBMinAvailable, p.PDBReplicas)
		}
	}
}

func TestParseFaults(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    []FaultKind
		wantErr bool
	}{
		{"", FaultKinds(), false},
		{"all", FaultKinds(), false},
		{"none", nil, false},
		{"agent-sigkill, apiserver-stop,agent-sigkill", []FaultKind{FaultAgentSIGKILL, FaultAPIServerStop}, false},
		{"kubelet-restart,containerd-restart", []FaultKind{FaultKubeletRestart, FaultContainerdRestart}, false},
		{"kubelet-reboot", nil, true},
	} {
		got, err := ParseFaults(tc.in)
		if (err != nil) != tc.wantErr || !slices.Equal(got, tc.want) {
			t.Errorf("ParseFaults(%q) = %v, %v; want %v, error %v", tc.in, got, err, tc.want, tc.wantErr)
		}
	}
}
