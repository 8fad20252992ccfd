package explain

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kube-pressure/pressure/internal/policy"
	"github.com/kube-pressure/pressure/internal/rank"
	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/threshold"
)

// agentNode is a node whose pods cgroup has avail available of 2Gi, with the kubelet's
// memory.available<100Mi (copied to allocatableMemory.available), and the given pods.
func agentNode(t *testing.T, avail int64, pods ...rank.Candidate) Input {
	cfg := parse(t, threshold.Input{EvictionHardSet: true, EvictionHard: map[string]string{"memory.available": "100Mi"}})
	snap := signal.Snapshot{Observations: map[signal.Signal]signal.Observation{
		signal.MemoryAvailable:            {Available: 6 * gi, Capacity: 8 * gi, Time: t0},
		signal.AllocatableMemoryAvailable: {Available: avail, Capacity: 2 * gi, Time: t0},
	}}
	return Input{Node: "n", Now: t0, Config: cfg, Capacity: map[string]int64{"memory": 8 * gi}, Snapshot: snap, Candidates: pods}
}

func bePod(name string, ws int64) rank.Candidate {
	c := rank.Candidate{UID: "uid-" + name, Namespace: "ns", Name: name, QOSClass: rank.QOSBestEffort,
		Containers: []rank.Container{{Name: "app"}}}
	if ws >= 0 {
		c.Stats = &signal.PodStats{UID: c.UID, Time: t0, MemoryWorkingSet: u64(ws)}
	}
	return c
}

func TestAgentActsAtItsHeadroomWhereTheKubeletWaits(t *testing.T) {
	r := Build(agentNode(t, 298*mi, bePod("stress", 1300*mi), bePod("web", 300*mi)))
	ps := r.Pressure
	if len(r.Kubelet.ThresholdsMet) != 0 {
		t.Fatalf("kubelet thresholds met %v at 298Mi available, want none", r.Kubelet.ThresholdsMet)
	}
	if d := cmp.Diff(ps.ThresholdsMet, []string{"allocatableMemory.available"}); d != "" {
		t.Errorf("agent thresholds met (-got +want):\n%s", d)
	}
	var victims []string
	for _, v := range ps.Victims {
		victims = append(victims, v.Pod)
	}
	if d := cmp.Diff(victims, []string{"ns/stress"}); d != "" {
		t.Errorf("agent victims (-got +want):\n%s", d)
	}
	if ps.Target == nil || ps.Target.Need != "165675008" { // 456Mi − 298Mi = 158Mi
		t.Errorf("target %+v, want need 158Mi", ps.Target)
	}
	want := []string{
		"pressure-agent acts earlier: its hard thresholds are the kubelet's raised by the headroom " +
			"(allocatableMemory.available 100Mi + 256Mi = 356Mi; memory.available 100Mi + 256Mi = 356Mi)",
		"pressure-agent's thresholds are met and the kubelet's are not: the agent evicts, the kubelet would not yet",
		"pressure-agent would evict ns/stress; the kubelet's threshold ranking would evict nothing",
	}
	if d := cmp.Diff(ps.Differences, want); d != "" {
		t.Errorf("differences (-got +want):\n%s", d)
	}
	if ps.Settings != defaultAgentSource {
		t.Errorf("settings %q, want the defaults named", ps.Settings)
	}
}

func TestAgentSkipsThePodWithoutStatsTheKubeletEvictsFirst(t *testing.T) {
	r := Build(agentNode(t, 50*mi, bePod("pending", -1), bePod("hog", 1900*mi)))
	if first := r.Kubelet.EvictionOrder[0].Pod; first != "ns/pending" {
		t.Fatalf("kubelet's first victim %s, want the pod without stats", first)
	}
	ps := r.Pressure
	if len(ps.Victims) != 1 || ps.Victims[0].Pod != "ns/hog" {
		t.Errorf("agent victims %+v, want ns/hog", ps.Victims)
	}
	want := "the kubelet would evict ns/pending first; pressure-agent skips it (no stats (no cgroup): frees nothing) and evicts ns/hog"
	if !contains(ps.Differences, want) {
		t.Errorf("differences %q lack %q", ps.Differences, want)
	}
}

func TestAgentSettingsFromTheConfigFileAreUsedAndNamed(t *testing.T) {
	in := agentNode(t, 50*mi, bePod("a", 1000*mi), bePod("b", 900*mi))
	cfg := policy.DefaultConfig()
	cfg.Policy = policy.Kubelet
	in.Agent = &AgentSettings{Config: cfg, Source: "--agent-config agent.yaml"}
	ps := Build(in).Pressure
	if ps.Settings != "--agent-config agent.yaml" || ps.Policy != "kubelet" {
		t.Errorf("settings %q policy %q, want the file's", ps.Settings, ps.Policy)
	}
	for _, th := range ps.Thresholds {
		if th.Resolved != th.KubeletResolved || th.Headroom != "" {
			t.Errorf("policy kubelet threshold %+v: want the kubelet's, no headroom", th)
		}
	}
	if len(ps.Victims) != 1 || ps.Victims[0].Pod != "ns/a" {
		t.Errorf("victims %+v, want ns/a alone (one pod per sync)", ps.Victims)
	}
}

func TestAgentSectionInTextAndJSON(t *testing.T) {
	r := Build(agentNode(t, 48*mi, bePod("a", 1000*mi), bePod("b", 900*mi), bePod("c", 52*mi)))
	var text, js bytes.Buffer
	if err := Text(&text, r); err != nil {
		t.Fatal(err)
	}
	if err := JSON(&js, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"PRESSURE-AGENT: what pressure-agent would do if the pressure persisted (policy pressure)",
		"settings: " + defaultAgentSource, "allocatableMemory.available<100Mi  100Mi    256Mi     356Mi",
		"1  ns/a  1     1000Mi  evict", "-  ns/b  2     900Mi   skip: not needed: the pods before cover the need",
		"Where it differs from the kubelet:"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
	if !strings.Contains(js.String(), `"pressure": {`) || !strings.Contains(js.String(), `"victims": [`) {
		t.Errorf("JSON lacks the pressure section:\n%s", js.String())
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
